#include "session/chain_tasks.h"

#include <chrono>
#include <map>
#include <utility>

#include "common/log.h"
#include "common/random.h"
#include "session/principal_scope.h"
#include "session/version_rules.h"

namespace imgmcp::session {

Result<TaskRecord> ChainTasks::Create(const NewTask& task) {
  RETURN_IF_ERROR(ValidateNewTask(task));
  ASSIGN_OR_RETURN(std::string runner, rows_.RunnerId());
  TaskRow row;
  row.record.task_id = RandomHex(16);  // 128 bits
  row.record.owner = task.owner;
  row.record.session_id = task.session_id;
  row.record.tool = task.tool;
  row.record.request_json = task.request_json;
  row.record.status = TaskStatus::kWorking;
  row.record.status_message = task.status_message;
  row.record.ttl_ms = task.ttl_ms;
  row.record.poll_interval_ms = task.poll_interval_ms;
  row.record.runner = task.batch_model.empty() ? std::move(runner) : kBatchRunner;
  row.record.batch_model = task.batch_model;
  row.created_ms = row.updated_ms = WallMs(clock_);
  RenderTaskTimes(row);
  RETURN_IF_ERROR(rows_.Insert(row));
  return std::move(row.record);
}

Result<std::optional<TaskRecord>> ChainTasks::Get(const std::string& task_id,
                                                  const std::string& owner) {
  if (!IsValidTaskId(task_id)) return std::optional<TaskRecord>();
  ASSIGN_OR_RETURN(std::optional<TaskRow> row, rows_.Load(task_id));
  if (!row.has_value() || row->record.owner != owner || TaskExpired(*row, WallMs(clock_))) {
    return std::optional<TaskRecord>();
  }
  ASSIGN_OR_RETURN(std::string own_runner, rows_.RunnerId());
  ASSIGN_OR_RETURN(TaskRow settled, SettleIfOrphaned(std::move(*row), own_runner));
  return std::optional<TaskRecord>(std::move(settled.record));
}

Result<TaskRecord> ChainTasks::Update(const TaskUpdate& update) {
  if (!IsValidTaskId(update.task_id)) return UnknownTaskError(update.task_id);
  RETURN_IF_ERROR(ValidateTaskUpdate(update));
  bool applied = false;
  ASSIGN_OR_RETURN(std::optional<TaskRow> row, rows_.Update(update, WallMs(clock_), &applied));
  if (!row.has_value() || TaskExpired(*row, WallMs(clock_)))
    return UnknownTaskError(update.task_id);
  if (!applied && !IsTerminal(row->record.status) && row->record.version.has_value()) {
    return TaskAlreadyCommittedError(update.task_id, *row->record.version);
  }
  if (!applied) return TaskAlreadyTerminalError(update.task_id, row->record.status);
  return std::move(row->record);
}

Result<TaskPage> ChainTasks::List(const std::string& owner,
                                  const std::optional<std::string>& cursor, int limit) {
  limit = ClampPageSize(limit);
  std::optional<TaskRows::After> after;
  if (cursor.has_value()) {
    after.emplace();
    if (!DecodeTaskCursor(*cursor, &after->created_ms, &after->task_id)) {
      return MakeError(ErrorCode::kInvalidArgument, "invalid cursor");
    }
  }
  ASSIGN_OR_RETURN(std::vector<TaskRow> rows, rows_.List(owner, after, limit + 1, WallMs(clock_)));
  TaskPage out;
  const bool more = rows.size() > static_cast<size_t>(limit);
  if (more) rows.resize(static_cast<size_t>(limit));
  if (more && !rows.empty()) {
    out.next_cursor = EncodeTaskCursor(rows.back().created_ms, rows.back().record.task_id);
  }
  ASSIGN_OR_RETURN(std::string own_runner, rows_.RunnerId());
  for (TaskRow& row : rows) {
    ASSIGN_OR_RETURN(TaskRow settled, SettleIfOrphaned(std::move(row), own_runner));
    out.tasks.push_back(std::move(settled.record));
  }
  return out;
}

Result<int64_t> ChainTasks::Sweep() {
  ASSIGN_OR_RETURN(std::string own_runner, rows_.RunnerId());
  ASSIGN_OR_RETURN(std::vector<TaskRow> unsettled, rows_.LoadOthersUnsettled(own_runner));
  std::map<std::string, bool> alive;  // by runner: asked once per sweep
  int settled = 0;
  for (const TaskRow& row : unsettled) {
    if (row.record.runner == kBatchRunner) continue;  // the batch poller's, never an orphan
    auto it = alive.find(row.record.runner);
    if (it == alive.end()) {
      ASSIGN_OR_RETURN(bool lives, rows_.RunnerIsAlive(row.record.runner));
      it = alive.emplace(row.record.runner, lives).first;
    }
    if (it->second) continue;
    RETURN_IF_ERROR(SettleOrphan(row));
    ++settled;
  }
  ASSIGN_OR_RETURN(int64_t removed, rows_.DeleteExpired(WallMs(clock_)));
  if (settled > 0 || removed > 0) {
    log::Info("session", "task sweep: settled " + std::to_string(settled) +
                             " task(s) whose runner stopped, removed " + std::to_string(removed) +
                             " expired task(s)");
  }
  return removed;
}

Result<TaskRow> ChainTasks::SettleIfOrphaned(TaskRow row, const std::string& own_runner) {
  if (IsTerminal(row.record.status) || row.record.runner == own_runner ||
      row.record.runner == kBatchRunner) {
    return row;
  }
  ASSIGN_OR_RETURN(bool alive, rows_.RunnerIsAlive(row.record.runner));
  if (alive) return row;
  return SettleOrphan(row);
}

// The runner is gone: what it left committed decides. Its turns are released first, so no commit
// of it can land after the key was looked up; the update is conditional, so a runner that
// finished in the meantime (or another reader settling the same task) wins and is returned.
Result<TaskRow> ChainTasks::SettleOrphan(const TaskRow& row) {
  const TaskRecord& task = row.record;
  RETURN_IF_ERROR(rows_.ReleaseRunner(task.runner));
  TaskUpdate update;
  update.task_id = task.task_id;
  update.owner = task.owner;
  std::optional<int64_t> committed;
  if (IsValidStoredSessionId(task.session_id)) {
    ASSIGN_OR_RETURN(std::optional<AppliedKey> key,
                     sessions_.FindAppliedKey(task.session_id, TaskIdempotencyKey(task.task_id)));
    if (key.has_value() && key->version.has_value()) committed = key->version->version;
  }
  const std::string kind(rows_.RunnerKind());
  if (committed.has_value()) {
    update.status = TaskStatus::kCompleted;
    update.version = committed;
    update.status_message = "the " + kind + " running this task stopped after committing version " +
                            std::to_string(*committed);
  } else {
    update.status = TaskStatus::kFailed;
    update.error_json = RunnerStoppedErrorJson(kind);
    update.status_message =
        "the " + kind + " running this task stopped before it finished; nothing was committed";
  }
  bool applied = false;
  ASSIGN_OR_RETURN(std::optional<TaskRow> after, rows_.Update(update, WallMs(clock_), &applied));
  if (!after.has_value()) return row;  // removed meanwhile: show what was read
  if (applied) {
    log::Info("session", "task " + task.task_id + " " +
                             std::string(TaskStatusName(after->record.status)) + ": its " + kind +
                             " " + task.runner + " stopped");
  }
  return std::move(*after);
}

}  // namespace imgmcp::session
