// The tasks extension's wire shapes (task_runner.h): the CreateTaskResult a tools/call answers
// with, the DetailedTask of tasks/get, and the params of tasks/get, tasks/update and
// tasks/cancel.
#pragma once

#include <string>
#include <string_view>

#include "common/json.h"
#include "common/result.h"
#include "mcp/json_rpc.h"
#include "mcp/task_runner.h"

namespace imgmcp::mcp {

namespace methods {
inline constexpr char kTasksGet[] = "tasks/get";
inline constexpr char kTasksUpdate[] = "tasks/update";
inline constexpr char kTasksCancel[] = "tasks/cancel";
inline constexpr char kTasksNotification[] = "notifications/tasks";
}  // namespace methods

// resultType "task" and the Task's fields, flat: taskId, status, statusMessage, createdAt,
// lastUpdatedAt, ttlMs, pollIntervalMs.
Json CreateTaskResultJson(const TaskSnapshot& task);
// The Task's fields and, by status, result (completed), error (failed) or inputRequests
// (input_required).
Json DetailedTaskJson(const TaskSnapshot& task);

// Why a tools/call could not become a task (Connection::CallAsTask's error), as the JSON-RPC
// error: a modern client that did not declare the extension (-32021 naming it); a legacy
// params.task that is malformed (-32602) or names a tool that is never a task (-32601).
RpcError TaskCallRefusal(const Error& error);

// tasks/get and tasks/cancel.
struct TaskIdParams {
  std::string task_id;
  static Result<TaskIdParams> FromJson(const Json& params, std::string_view method);
};
// tasks/update.
struct TaskUpdateParams {
  std::string task_id;
  Json input_responses = Json::object();
  static Result<TaskUpdateParams> FromJson(const Json& params, std::string_view method);
};

}  // namespace imgmcp::mcp
