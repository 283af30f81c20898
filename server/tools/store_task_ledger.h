// The session store's task rows (session/task_records.h) as the protocol core's TaskLedger
// (mcp/task_ledger.h): a task survives its request, connection and process, and any
// replica on the same store answers tasks/get for it. Rows keep no image bytes
// (task_payloads.h): a result's image block is rebuilt from its version when the task is read.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "imaging/codec.h"
#include "mcp/task_ledger.h"
#include "server/tools/tool_results.h"
#include "session/session_store.h"

namespace imgmcp::tools {

class StoreTaskLedger final : public mcp::TaskLedger {
 public:
  // `store` must outlive the ledger; `preview` and `limits` rebuild a result's preview as the
  // tools made it (ImageToolsOptions).
  StoreTaskLedger(session::SessionStore& store, imaging::PreviewOptions preview,
                  imaging::DecodeLimits limits);

  Result<mcp::TaskSnapshot> Create(const mcp::Caller& caller, const std::string& tool,
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

  // Batch delivery is on (the Gemini API backend, its poller running): a generate_image call with
  // delivery "batch" becomes a batch task of its model (`default_model` when it names none),
  // waiting for `window`, its session named now when the call names none (so a commit retried
  // after a crash finds its first one). Off by default: such a call is an ordinary task, which
  // its handler refuses.
  void EnableBatch(std::string default_model, std::chrono::milliseconds window) {
    batch_model_ = std::move(default_model);
    batch_window_ = window;
  }

  // A row as tasks/get shows it, its image blocks rebuilt.
  mcp::TaskSnapshot Snapshot(const session::TaskRecord& record) const;

 private:
  // The image block of a version as a result shows it for `mode`.
  Result<Json> ImageBlock(const std::string& session_id, int64_t version, InlineMode mode) const;

  // What Create keeps of `arguments` for a batch call (`task` gets its model, status and session).
  Json BatchTask(const mcp::Caller& caller, Json arguments, session::NewTask& task) const;

  session::SessionStore& store_;
  const imaging::PreviewOptions preview_;
  const imaging::DecodeLimits limits_;
  std::string batch_model_;  // "": batch delivery off (EnableBatch)
  std::chrono::milliseconds batch_window_{10'000};
};

// A stored task status as the protocol core names it.
mcp::TaskState TaskStateOf(session::TaskStatus status);

// A row as tasks/get shows it, as stored (image blocks not rebuilt: StoreTaskLedger::Snapshot).
// A completed row without a stored result (a task whose runner died after committing, completed
// from its version) shows the version it committed.
mcp::TaskSnapshot SnapshotOf(const session::TaskRecord& record);

}  // namespace imgmcp::tools
