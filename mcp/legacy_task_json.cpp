#include "mcp/legacy_task_json.h"

#include <utility>

namespace imgmcp::mcp {

namespace {
constexpr char kModelImmediateResponse[] = "io.modelcontextprotocol/model-immediate-response";

bool IsErrorResult(const TaskSnapshot& task) {
  return task.state == TaskState::kCompleted && task.result && task.result->is_object() &&
         task.result->value("isError", false);
}

// The first text block of a CallToolResult, "" when it has none.
std::string FirstText(const Json& result) {
  auto content = result.find("content");
  if (content == result.end() || !content->is_array()) return {};
  for (const Json& block : *content) {
    if (block.is_object() && block.value("type", "") == "text" && block.contains("text") &&
        block["text"].is_string()) {
      return block["text"].get<std::string>();
    }
  }
  return {};
}

std::string StatusMessage(const TaskSnapshot& task) {
  if (!task.status_message.empty()) return task.status_message;
  if (IsErrorResult(task)) return FirstText(*task.result);
  if (task.state == TaskState::kFailed && task.error && task.error->is_object() &&
      task.error->contains("message") && (*task.error)["message"].is_string()) {
    return (*task.error)["message"].get<std::string>();
  }
  if (task.state == TaskState::kCancelled) return "The task was cancelled by request.";
  return {};
}
}  // namespace

bool HasTasksUtility(std::string_view protocol_version) { return protocol_version == "2025-11-25"; }

Json TasksUtilityCapability() {
  return Json{{"list", Json::object()},
              {"cancel", Json::object()},
              {"requests", Json{{"tools", Json{{"call", Json::object()}}}}}};
}

std::optional<std::string> LegacyTaskSupport(TaskSupport support) {
  if (support == TaskSupport::kForbidden) return std::nullopt;
  return "optional";
}

Result<TaskAugmentation> TaskAugmentation::FromJson(const Json& task) {
  if (!task.is_object()) {
    return MakeError(ErrorCode::kInvalidArgument, "tools/call params.task must be an object");
  }
  TaskAugmentation out;
  auto ttl = task.find("ttl");
  if (ttl == task.end() || ttl->is_null()) return out;
  if (!ttl->is_number_integer() || ttl->get<int64_t>() < 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "tools/call params.task.ttl must be a non-negative integer (milliseconds)");
  }
  out.ttl_ms = ttl->get<int64_t>();
  return out;
}

Result<std::optional<TaskAugmentation>> ReadAugmentation(std::string_view protocol_version,
                                                         const ToolDefinition& tool,
                                                         const std::optional<Json>& task) {
  if (!task || !HasTasksUtility(protocol_version)) return std::optional<TaskAugmentation>();
  if (tool.task_support == TaskSupport::kForbidden) {
    return MakeError(ErrorCode::kUnsupported,
                     "Tool " + tool.name +
                         " does not support task-augmented calls (its "
                         "execution.taskSupport is forbidden): call it without params.task");
  }
  ASSIGN_OR_RETURN(TaskAugmentation augmentation, TaskAugmentation::FromJson(*task));
  return std::optional<TaskAugmentation>(augmentation);
}

const char* LegacyStatusName(const TaskSnapshot& task) {
  return IsErrorResult(task) ? "failed" : TaskStateName(task.state);
}

Json LegacyTaskJson(const TaskSnapshot& task) {
  Json json = Json::object();
  json["taskId"] = task.task_id;
  json["status"] = LegacyStatusName(task);
  if (std::string message = StatusMessage(task); !message.empty()) {
    json["statusMessage"] = std::move(message);
  }
  json["createdAt"] = task.created_at;
  json["lastUpdatedAt"] = task.updated_at;
  json["ttl"] = task.ttl_ms > 0 ? Json(task.ttl_ms) : Json(nullptr);
  json["pollInterval"] = task.poll_interval_ms;
  return json;
}

Json LegacyCreateTaskResult(const TaskSnapshot& task) {
  return Json{
      {"task", LegacyTaskJson(task)},
      {"_meta",
       {{kModelImmediateResponse,
         "Started task " + task.task_id + "; its result will be available when it finishes."}}}};
}

Json LegacyTaskListResult(const TaskList& list) {
  Json tasks = Json::array();
  for (const TaskSnapshot& task : list.tasks) tasks.push_back(LegacyTaskJson(task));
  Json json = {{"tasks", std::move(tasks)}};
  if (list.next_cursor) json["nextCursor"] = *list.next_cursor;
  return json;
}

Json LegacyTaskPayload(const TaskSnapshot& task) {
  Json result = task.result && task.result->is_object() ? *task.result : Json::object();
  Json& meta = result["_meta"];
  if (!meta.is_object()) meta = Json::object();
  meta[kRelatedTaskMeta] = Json{{"taskId", task.task_id}};
  return result;
}

}  // namespace imgmcp::mcp
