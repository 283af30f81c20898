#include "session/task_rules.h"

#include <chrono>

#include "common/base64.h"
#include "common/clock.h"
#include "common/decimal.h"
#include "session/data_dir.h"
#include "session/principal_scope.h"

namespace imgmcp::session {
namespace {

constexpr std::string_view kTaskCursorPrefix = "t1:";

Error Invalid(const std::string& message) {
  return MakeError(ErrorCode::kInvalidArgument, message);
}

}  // namespace

Status ValidateNewTask(const NewTask& task) {
  if (!task.session_id.empty() && !IsValidStoredSessionId(task.session_id)) {
    return Invalid("task session_id \"" + task.session_id.substr(0, 80) +
                   "\" is not valid: use \"\" or a valid session id");
  }
  if (task.tool.empty()) return Invalid("task tool must not be empty");
  if (task.ttl_ms < 0) return Invalid("task ttl_ms must be >= 0 (0: the row never expires)");
  if (task.poll_interval_ms < 0) return Invalid("task poll_interval_ms must be >= 0");
  if (!task.batch_model.empty() && !IsBatchName(task.batch_model)) {
    return Invalid("task batch_model must be 1-128 of A-Z a-z 0-9 . _ - /");
  }
  return Status::Ok();
}

bool IsBatchName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-' || c == '/';
    if (!ok) return false;
  }
  return true;
}

Status ValidateTaskUpdate(const TaskUpdate& update) {
  const bool has_result = update.result_json.has_value() || update.version.has_value();
  const bool has_error = update.error_json.has_value();
  const std::string status(TaskStatusName(update.status));
  switch (update.status) {
    case TaskStatus::kCompleted:
      if (!has_result) return Invalid("a completed task needs result_json or version");
      if (has_error) return Invalid("a completed task takes no error_json");
      return Status::Ok();
    case TaskStatus::kFailed:
      if (!has_error) return Invalid("a failed task needs error_json");
      if (has_result) return Invalid("a failed task takes no result_json or version");
      return Status::Ok();
    default:
      if (has_result || has_error) {
        return Invalid("a " + status + " task takes no result_json, version or error_json");
      }
      return Status::Ok();
  }
}

bool TaskExpired(const TaskRow& row, int64_t now_ms) {
  return IsTerminal(row.record.status) && row.record.ttl_ms > 0 &&
         row.updated_ms + row.record.ttl_ms <= now_ms;
}

void RenderTaskTimes(TaskRow& row) {
  using std::chrono::milliseconds;
  using std::chrono::system_clock;
  row.record.created_at = FormatRfc3339(system_clock::time_point(milliseconds(row.created_ms)));
  row.record.updated_at = FormatRfc3339(system_clock::time_point(milliseconds(row.updated_ms)));
}

std::string EncodeTaskCursor(int64_t created_ms, const std::string& task_id) {
  return Base64Encode(std::string(kTaskCursorPrefix) + std::to_string(created_ms) + ":" + task_id);
}

bool DecodeTaskCursor(const std::string& cursor, int64_t* created_ms, std::string* task_id) {
  Result<std::string> raw = Base64Decode(cursor);
  if (!raw.ok() || raw->compare(0, kTaskCursorPrefix.size(), kTaskCursorPrefix) != 0) return false;
  const std::string_view rest = std::string_view(*raw).substr(kTaskCursorPrefix.size());
  const size_t colon = rest.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  const std::optional<int64_t> ms = ParseDecimal<int64_t>(rest.substr(0, colon));
  if (!ms) return false;
  *created_ms = *ms;
  *task_id = std::string(rest.substr(colon + 1));
  return IsValidTaskId(*task_id);
}

std::string RunnerStoppedErrorJson(std::string_view runner_kind) {
  return R"({"code":-32603,"message":"the )" + std::string(runner_kind) +
         R"( running this task stopped before it finished; nothing was committed"})";
}

Error TaskAlreadyTerminalError(const std::string& task_id, TaskStatus status) {
  return MakeError(ErrorCode::kFailedPrecondition,
                   "task " + task_id + " is already " + std::string(TaskStatusName(status)));
}

Error TaskAlreadyCommittedError(const std::string& task_id, int64_t version) {
  return MakeError(ErrorCode::kConflict, "task " + task_id + " already committed version " +
                                             std::to_string(version) + " and completes with it");
}

Error TaskEndedBeforeCommitError(const std::string& task_id) {
  return MakeError(ErrorCode::kCancelled, "task " + task_id +
                                              " was cancelled or stopped before its commit; "
                                              "nothing was committed");
}

Error UnknownTaskError(const std::string& task_id) {
  return MakeError(ErrorCode::kNotFound, "unknown task \"" + task_id.substr(0, 64) + "\"");
}

}  // namespace imgmcp::session
