// The wire shapes of the 2025-11-25 experimental tasks utility (basic/utilities/tasks of that
// revision), for legacy sessions that negotiated it: the `tasks` server capability, a tool's
// `execution.taskSupport`, the `task` param of a task-augmented tools/call, the Task object of
// CreateTaskResult, tasks/get, tasks/list, tasks/cancel and notifications/tasks/status, and the
// related-task _meta of a tasks/result answer. The tasks themselves are task_runner.h's, the same
// ones the 2026-07-28 extension shows with task_json.h's shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/json.h"
#include "common/result.h"
#include "mcp/task_runner.h"
#include "mcp/tool.h"

namespace imgmcp::mcp {

namespace methods {
inline constexpr char kTasksResult[] = "tasks/result";
inline constexpr char kTasksList[] = "tasks/list";
inline constexpr char kTasksStatus[] = "notifications/tasks/status";
}  // namespace methods

// The _meta key tying a message to its task.
inline constexpr char kRelatedTaskMeta[] = "io.modelcontextprotocol/related-task";

// True for the legacy revision that has the tasks utility (2025-11-25).
bool HasTasksUtility(std::string_view protocol_version);

// capabilities.tasks of initialize: tasks/list, tasks/cancel and task-augmented tools/call.
Json TasksUtilityCapability();

// A tool's execution.taskSupport for legacy sessions, or nullopt (forbidden: the member is
// omitted, its default). Legacy clients decide themselves whether a call becomes a task, and
// every task-capable tool also answers a plain call, so both kinds are "optional".
std::optional<std::string> LegacyTaskSupport(TaskSupport support);

// What a task-augmented tools/call asked for (params.task).
struct TaskAugmentation {
  std::optional<int64_t> ttl_ms;  // params.task.ttl
  // params.task must be an object; its ttl, when present and not null, a non-negative integer.
  static Result<TaskAugmentation> FromJson(const Json& task);
};
// A legacy tools/call's augmentation, or nullopt when it is a plain call: params.task is read
// only in a session that negotiated 2025-11-25 (other versions ignore it, as the utility asks
// of receivers that do not declare it). kInvalidArgument for a malformed params.task;
// kUnsupported when the tool's calls never become tasks (taskSupport forbidden).
Result<std::optional<TaskAugmentation>> ReadAugmentation(std::string_view protocol_version,
                                                         const ToolDefinition& tool,
                                                         const std::optional<Json>& task);

// The status a legacy client sees: a completed tool call whose result has isError is "failed"
// (the utility's rule for tool calls); otherwise the task's own.
const char* LegacyStatusName(const TaskSnapshot& task);
// The Task object: taskId, status, statusMessage (a failure's message when the task has none),
// createdAt, lastUpdatedAt, ttl (null when the task never expires), pollInterval.
Json LegacyTaskJson(const TaskSnapshot& task);
// tools/call's answer when it became a task: {task, _meta: a line for the model meanwhile}.
Json LegacyCreateTaskResult(const TaskSnapshot& task);
// tasks/list: {tasks, nextCursor?}.
Json LegacyTaskListResult(const TaskList& list);
// tasks/result of a completed task: its CallToolResult with _meta[kRelatedTaskMeta].
Json LegacyTaskPayload(const TaskSnapshot& task);

}  // namespace imgmcp::mcp
