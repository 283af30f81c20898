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

namespace {
constexpr std::string_view kTaskKeyPrefix = "task:";
}  // namespace

std::string TaskIdempotencyKey(std::string_view task_id) {
  return std::string(kTaskKeyPrefix) + std::string(task_id);
}

std::string TaskIdOfKey(std::string_view key) {
  if (key.substr(0, kTaskKeyPrefix.size()) != kTaskKeyPrefix) return "";
  const std::string_view id = key.substr(kTaskKeyPrefix.size());
  return IsValidTaskId(id) ? std::string(id) : "";
}

}  // namespace imgmcp::session
