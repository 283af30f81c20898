#include "session/task_records.h"

#include <array>
#include <utility>

namespace imgmcp::session {
namespace {

constexpr std::array<std::pair<TaskStatus, std::string_view>, 5> kNames = {{
    {TaskStatus::kWorking, "working"},
    {TaskStatus::kInputRequired, "input_required"},
    {TaskStatus::kCompleted, "completed"},
    {TaskStatus::kFailed, "failed"},
    {TaskStatus::kCancelled, "cancelled"},
}};

}  // namespace

std::string_view TaskStatusName(TaskStatus status) {
  for (const auto& [s, name] : kNames) {
    if (s == status) return name;
  }
  return "working";
}

std::optional<TaskStatus> ParseTaskStatus(std::string_view name) {
  for (const auto& [s, n] : kNames) {
    if (n == name) return s;
  }
  return std::nullopt;
}

bool IsTerminal(TaskStatus status) {
  return status == TaskStatus::kCompleted || status == TaskStatus::kFailed ||
         status == TaskStatus::kCancelled;
}

bool IsValidTaskId(std::string_view task_id) {
  if (task_id.size() != 32) return false;
  for (char c : task_id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string TaskIdempotencyKey(std::string_view task_id) { return "task:" + std::string(task_id); }

}  // namespace imgmcp::session
