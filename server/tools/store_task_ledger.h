// The session store's task rows (session/task_records.h) as the protocol core's TaskLedger
// (server/mcp/task_ledger.h): a task survives its request, connection and process, and any
// replica on the same store answers tasks/get for it.
#pragma once

#include <optional>
#include <string>

#include "server/mcp/task_ledger.h"
#include "session/session_store.h"

namespace imgmcp::tools {

class StoreTaskLedger final : public mcp::TaskLedger {
 public:
  explicit StoreTaskLedger(session::SessionStore& store) : store_(store) {}

  Result<mcp::TaskSnapshot> Create(const std::string& owner, const std::string& tool,
                                   const Json& arguments, const mcp::TaskOptions& options) override;
  Result<std::optional<mcp::TaskSnapshot>> Get(const std::string& task_id,
                                               const std::string& owner) override;
  Result<mcp::TaskSnapshot> Set(const std::string& task_id, const std::string& owner,
                                mcp::TaskState state, const std::optional<Json>& payload) override;
  Result<mcp::TaskSnapshot> EndUncommitted(const std::string& task_id, const std::string& owner,
                                           mcp::TaskState state,
                                           const std::optional<Json>& error) override;
  Result<mcp::TaskList> List(const std::string& owner, const std::optional<std::string>& cursor,
                             int limit) override;

 private:
  session::SessionStore& store_;
};

// A stored task status as the protocol core names it.
mcp::TaskState TaskStateOf(session::TaskStatus status);

// A row as tasks/get shows it. A completed row without a stored result (a task whose runner died
// after committing, completed from its version) shows the version it committed.
mcp::TaskSnapshot SnapshotOf(const session::TaskRecord& record);

}  // namespace imgmcp::tools
