#include "session/batch_tasks.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "session/task_rules.h"
#include "session/version_rules.h"

namespace imgmcp::session {
namespace {

std::vector<TaskRecord> Records(std::vector<TaskRow> rows) {
  std::vector<TaskRecord> out;
  out.reserve(rows.size());
  for (TaskRow& row : rows) out.push_back(std::move(row.record));
  return out;
}

Status CheckName(const char* what, const std::string& name) {
  if (IsBatchName(name)) return Status::Ok();
  return MakeError(ErrorCode::kInvalidArgument,
                   std::string("batch ") + what + " \"" + name.substr(0, 80) +
                       "\" is not valid: 1-128 of A-Z a-z 0-9 . _ - /");
}

}  // namespace

Result<std::vector<TaskRecord>> BatchTasks::Group(const std::string& model,
                                                  const std::string& group, int limit,
                                                  int64_t window_ms) {
  RETURN_IF_ERROR(CheckName("model", model));
  RETURN_IF_ERROR(CheckName("group", group));
  if (limit < 1 || limit > 1000) {
    return MakeError(ErrorCode::kInvalidArgument, "a batch group takes 1-1000 tasks");
  }
  ASSIGN_OR_RETURN(std::vector<TaskRow> rows,
                   rows_.GroupBatch(model, group, limit, WallMs(clock_) - window_ms));
  std::sort(rows.begin(), rows.end(), [](const TaskRow& a, const TaskRow& b) {
    return std::tie(a.created_ms, a.record.task_id) < std::tie(b.created_ms, b.record.task_id);
  });
  return Records(std::move(rows));
}

Result<bool> BatchTasks::Ungroup(const std::string& group, const std::string& task_id) {
  RETURN_IF_ERROR(CheckName("group", group));
  if (!IsValidTaskId(task_id)) return MakeError(ErrorCode::kInvalidArgument, "not a task id");
  return rows_.UngroupBatchTask(group, task_id);
}

Result<int64_t> BatchTasks::SetJob(const std::string& group, const std::string& job) {
  RETURN_IF_ERROR(CheckName("group", group));
  RETURN_IF_ERROR(CheckName("job", job));
  return rows_.SetBatchJob(group, job);
}

Result<std::vector<TaskRecord>> BatchTasks::Open() {
  ASSIGN_OR_RETURN(std::vector<TaskRow> rows, rows_.LoadOpenBatch());
  return Records(std::move(rows));
}

}  // namespace imgmcp::session
