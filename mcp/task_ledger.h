// Where tasks are kept beyond the process that runs them (task_runner.h): the session store's task
// rows, behind an interface so the protocol core stays free of sessions (the adapter is
// server/tools/store_task_ledger.h). Without a ledger a TaskRunner keeps its tasks in memory only.
#pragma once

#include <optional>
#include <string>

#include "common/json.h"
#include "common/result.h"
#include "mcp/task_runner.h"

namespace imgmcp::mcp {

class TaskLedger {
 public:
  virtual ~TaskLedger() = default;
  // A new working task of `caller.owner` (on `caller.principal`'s session), durable when this
  // returns; its id is the ledger's.
  virtual Result<TaskSnapshot> Create(const Caller& caller, const std::string& tool,
                                      const Json& arguments, const TaskOptions& options) = 0;
  // The owner's task (nullopt: unknown, expired or another owner's). A task whose runner died
  // comes back settled (completed from its committed version, or failed).
  virtual Result<std::optional<TaskSnapshot>> Get(const std::string& task_id,
                                                  const std::string& owner) = 0;
  // Moves a task that is not terminal to `state` with its result (completed) or error (failed).
  // kFailedPrecondition when it is terminal already (e.g. cancelled by another replica).
  virtual Result<TaskSnapshot> Set(const std::string& task_id, const std::string& owner,
                                   TaskState state, const std::optional<Json>& payload) = 0;
  // Ends a task that is not terminal with `state` (kCancelled, or kFailed with its error) unless
  // the task's commit has claimed it: kConflict then, naming the version it completes with;
  // kFailedPrecondition when it is terminal already. Decided atomically against that commit.
  virtual Result<TaskSnapshot> EndUncommitted(const std::string& task_id, const std::string& owner,
                                              TaskState state,
                                              const std::optional<Json>& error) = 0;
  // The owner's tasks, newest first, at most `limit` (<= 0: the ledger's page). A cursor it did
  // not make is kInvalidArgument. A ledger that cannot list answers kUnsupported.
  virtual Result<TaskList> List(const std::string& /*owner*/,
                                const std::optional<std::string>& /*cursor*/, int /*limit*/) {
    return MakeError(ErrorCode::kUnsupported, "this task ledger cannot list tasks");
  }
};

}  // namespace imgmcp::mcp
