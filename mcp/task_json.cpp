#include "mcp/task_json.h"

#include <utility>

namespace imgmcp::mcp {

namespace {
Json TaskFields(const TaskSnapshot& task) {
  Json json = Json::object();
  json["taskId"] = task.task_id;
  json["status"] = TaskStateName(task.state);
  if (!task.status_message.empty()) json["statusMessage"] = task.status_message;
  json["createdAt"] = task.created_at;
  json["lastUpdatedAt"] = task.updated_at;
  json["ttlMs"] = task.ttl_ms;
  json["pollIntervalMs"] = task.poll_interval_ms;
  return json;
}

Error Invalid(std::string_view method, const std::string& what) {
  return MakeError(ErrorCode::kInvalidArgument, std::string(method) + " " + what);
}

Result<std::string> ReadTaskId(const Json& params, std::string_view method) {
  if (!params.is_object()) return Invalid(method, "params must be an object");
  auto it = params.find("taskId");
  if (it == params.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
    return Invalid(method, "params.taskId must be a non-empty string");
  }
  return it->get<std::string>();
}
}  // namespace

Json CreateTaskResultJson(const TaskSnapshot& task) {
  Json json = TaskFields(task);
  json["resultType"] = "task";
  return json;
}

Json DetailedTaskJson(const TaskSnapshot& task) {
  Json json = TaskFields(task);
  if (task.state == TaskState::kCompleted && task.result) {
    json["result"] = *task.result;  // a 2026-07-28 CallToolResult: resultType is required
    if (json["result"].is_object()) json["result"].emplace("resultType", "complete");
  }
  if (task.state == TaskState::kFailed && task.error) json["error"] = *task.error;
  if (task.state == TaskState::kInputRequired) {
    json["inputRequests"] = task.input_requests.value_or(Json::object());
  }
  return json;
}

RpcError TaskCallRefusal(const Error& error) {
  switch (error.code) {
    case ErrorCode::kInvalidArgument:
      return InvalidParams(error.message);
    case ErrorCode::kUnsupported:
      return RpcError{rpc_error::kMethodNotFound, error.message, std::nullopt};
    default:
      return MissingClientCapability(Json{{"extensions", Json{{kTasksExtension, Json::object()}}}});
  }
}

Result<TaskIdParams> TaskIdParams::FromJson(const Json& params, std::string_view method) {
  auto id = ReadTaskId(params, method);
  if (!id.ok()) return id.error();
  return TaskIdParams{std::move(id).value()};
}

Result<TaskUpdateParams> TaskUpdateParams::FromJson(const Json& params, std::string_view method) {
  auto id = ReadTaskId(params, method);
  if (!id.ok()) return id.error();
  TaskUpdateParams p;
  p.task_id = std::move(id).value();
  auto it = params.find("inputResponses");
  if (it != params.end()) {
    if (!it->is_object()) return Invalid(method, "params.inputResponses must be an object");
    p.input_responses = *it;
  }
  return p;
}

}  // namespace imgmcp::mcp
