// The 2025-11-25 experimental tasks utility on a legacy session (legacy_task_json.h): tasks/get,
// tasks/result, tasks/list and tasks/cancel, the CreateTaskResult of a task-augmented tools/call
// and notifications/tasks/status. The tasks are the TaskRunner's (task_runner.h), the same rows
// the 2026-07-28 extension shows; only the shapes differ. A session that negotiated an earlier
// version has none of these methods.
#include <utility>

#include "mcp/connection.h"
#include "mcp/legacy_task_json.h"
#include "mcp/method_handlers.h"
#include "mcp/server.h"

namespace imgmcp::mcp {

namespace {
RpcError UnknownLegacyTask(const std::string& task_id) {
  return InvalidParams("Failed to retrieve task: unknown task " + Json(Quoted(task_id)).dump() +
                       " (it never existed, has expired, or belongs to other credentials)");
}

bool Ended(const TaskSnapshot& task) {
  return task.state == TaskState::kCompleted || task.state == TaskState::kFailed ||
         task.state == TaskState::kCancelled;
}

// What the task's tools/call answered when it failed with a JSON-RPC error.
RpcError StoredError(const TaskSnapshot& task) {
  RpcError error = InternalError("task " + task.task_id + " failed");
  if (!task.error || !task.error->is_object()) return error;
  const Json& stored = *task.error;
  if (auto code = stored.find("code"); code != stored.end() && code->is_number_integer()) {
    error.code = code->get<int>();
  }
  if (auto message = stored.find("message"); message != stored.end() && message->is_string()) {
    error.message = message->get<std::string>();
  }
  if (auto data = stored.find("data"); data != stored.end()) error.data = *data;
  return error;
}

// tasks/result on a worker: waits for the task to end and answers what its call answered.
Outcome AwaitTaskResult(McpServer& server, const RequestScope& scope, const std::string& task_id,
                        std::stop_token token) {
  auto task = server.tasks().WaitTerminal(task_id, scope.caller.owner, token);
  if (!task.ok()) {
    if (task.error().code == ErrorCode::kNotFound) return Outcome::Fail(UnknownLegacyTask(task_id));
    return Outcome::Fail(InternalError(task.error().message));  // stopped: not sent
  }
  switch (task->state) {
    case TaskState::kCompleted:
      return Outcome::Of(LegacyTaskPayload(*task));
    case TaskState::kFailed:
      return Outcome::Fail(StoredError(*task));
    default:
      return Outcome::Fail(InvalidParams("Task " + task_id + " was cancelled: it has no result"));
  }
}

}  // namespace

namespace handlers {

Outcome LegacyGetTask(Connection& c, RequestScope& scope, const TaskIdParams& params) {
  if (!HasTasksUtility(scope.protocol_version))
    return Outcome::Fail(MethodNotFound(methods::kTasksGet));
  auto task = c.server().tasks().Get(params.task_id, scope.caller.owner);
  if (!task) return Outcome::Fail(UnknownLegacyTask(params.task_id));
  return Outcome::Of(LegacyTaskJson(*task));
}

Outcome LegacyCancelTask(Connection& c, RequestScope& scope, const TaskIdParams& params) {
  if (!HasTasksUtility(scope.protocol_version)) {
    return Outcome::Fail(MethodNotFound(methods::kTasksCancel));
  }
  auto cancelled = c.server().tasks().Cancel(params.task_id, scope.caller.owner);
  AuditCancel(c, scope, params.task_id, cancelled);
  if (!cancelled.ok()) return Outcome::Fail(UnknownLegacyTask(params.task_id));
  switch (cancelled->kind) {
    case CancelOutcome::Kind::kCancelled:
      return Outcome::Of(LegacyTaskJson(cancelled->task));
    case CancelOutcome::Kind::kTooLate:
      return Outcome::Fail(InvalidParams("Cannot cancel task: " + cancelled->message));
    case CancelOutcome::Kind::kEnded:
      break;
  }
  return Outcome::Fail(
      InvalidParams(std::string("Cannot cancel task: already in terminal status '") +
                    LegacyStatusName(cancelled->task) + "'"));
}

Outcome ListTasks(Connection& c, RequestScope& scope, const ListParams& params) {
  if (!HasTasksUtility(scope.protocol_version))
    return Outcome::Fail(MethodNotFound(methods::kTasksList));
  auto page =
      c.server().tasks().List(scope.caller.owner, params.cursor, c.server().options().page_size);
  if (!page.ok()) {
    if (page.error().code == ErrorCode::kInvalidArgument) {
      return Outcome::Fail(InvalidParams("Invalid cursor for tasks/list: " + page.error().message));
    }
    return Outcome::Fail(ToRpcError(page.error()));
  }
  return Outcome::Of(LegacyTaskListResult(*page));
}

Outcome TaskResult(Connection& c, RequestScope& scope, const TaskIdParams& params) {
  if (!HasTasksUtility(scope.protocol_version)) {
    return Outcome::Fail(MethodNotFound(methods::kTasksResult));
  }
  // Waits on a worker, cancellable like any request (notifications/cancelled, end of input).
  c.RunAsync(scope, [scope, id = params.task_id](Connection& self, std::stop_token token) {
    return AwaitTaskResult(self.server(), scope, id, token);
  });
  return Outcome::Later();
}

Outcome AnswerLegacyTask(Connection& c, const RequestScope& scope, const TaskSnapshot& task) {
  c.Answer(scope, Outcome::Of(LegacyCreateTaskResult(task)));
  c.session().TrackLegacyTask(task.task_id, LegacyStatusName(task));
  // A change made before the task was listed here was not told: tell it now (once).
  if (auto now = c.server().tasks().Get(task.task_id, scope.caller.owner))
    NotifyLegacyTask(c, *now);
  return Outcome::Later();
}

void NotifyLegacyTask(Connection& c, const TaskSnapshot& task) {
  if (!c.session().LegacyTaskChanged(task.task_id, LegacyStatusName(task), Ended(task))) return;
  c.EmitNotification(methods::kTasksStatus, LegacyTaskJson(task), std::nullopt, /*modern=*/false);
}

}  // namespace handlers
}  // namespace imgmcp::mcp
