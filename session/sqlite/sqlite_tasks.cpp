#include "session/sqlite/sqlite_tasks.h"

#include <system_error>
#include <utility>

#include "common/random.h"
#include "session/file_io.h"

namespace imgmcp::session::sqlite {
namespace tasks {
namespace {

constexpr const char* kColumns = kTaskColumns;
constexpr const char* kNotTerminal = kTaskNotTerminal;
// A row expired at ?N (TaskExpired, task_rules.h).
constexpr const char* kExpired = kTaskExpiredAtPrefix;

Result<TaskRow> ReadRow(const Statement& st) {
  TaskRow row;
  TaskRecord& r = row.record;
  r.task_id = st.ColumnText(0);
  r.owner = st.ColumnText(1);
  r.session_id = st.ColumnText(2);
  r.tool = st.ColumnText(3);
  r.request_json = st.ColumnText(4);
  const std::optional<TaskStatus> status = ParseTaskStatus(st.ColumnText(5));
  if (!status.has_value()) {
    return MakeError(ErrorCode::kDataLoss,
                     "task " + r.task_id + " has an unknown status \"" + st.ColumnText(5) + "\"");
  }
  r.status = *status;
  r.status_message = st.ColumnText(6);
  r.result_json = st.ColumnText(7);
  if (!st.ColumnIsNull(8)) r.version = st.ColumnInt(8);
  r.error_json = st.ColumnText(9);
  r.ttl_ms = st.ColumnInt(10);
  r.poll_interval_ms = st.ColumnInt(11);
  row.created_ms = st.ColumnInt(12);
  row.updated_ms = st.ColumnInt(13);
  r.runner = st.ColumnText(14);
  r.batch_model = st.ColumnText(15);
  r.batch_group = st.ColumnText(16);
  r.batch_job = st.ColumnText(17);
  RenderTaskTimes(row);
  return row;
}

Result<std::vector<TaskRow>> ReadRows(Statement& st) {
  std::vector<TaskRow> out;
  RETURN_IF_ERROR(st.ForEachRow([&](Statement& s) -> Status {
    ASSIGN_OR_RETURN(TaskRow row, ReadRow(s));
    out.push_back(std::move(row));
    return Status::Ok();
  }));
  return out;
}

void BindOptional(Statement& st, int index, const std::optional<std::string>& value) {
  if (value.has_value()) {
    st.Bind(index, *value);
  } else {
    st.BindNull(index);
  }
}

}  // namespace

Status InsertTask(SqliteDb& db, const TaskRow& row) {
  ASSIGN_OR_RETURN(Statement st, db.Prepare(std::string("INSERT INTO tasks(") + kColumns +
                                            ") VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
  const TaskRecord& r = row.record;
  st.Bind(1, r.task_id).Bind(2, r.owner).Bind(3, r.session_id).Bind(4, r.tool);
  st.Bind(5, r.request_json).Bind(6, TaskStatusName(r.status)).Bind(7, r.status_message);
  st.Bind(8, r.result_json).Bind(9, r.version).Bind(10, r.error_json).Bind(11, r.ttl_ms);
  st.Bind(12, r.poll_interval_ms).Bind(13, row.created_ms).Bind(14, row.updated_ms);
  st.Bind(15, r.runner).Bind(16, r.batch_model).Bind(17, r.batch_group).Bind(18, r.batch_job);
  return st.Run();
}

Result<std::optional<TaskRow>> LoadTask(SqliteDb& db, const std::string& task_id) {
  ASSIGN_OR_RETURN(Statement st,
                   db.Prepare(std::string("SELECT ") + kColumns + " FROM tasks WHERE task_id = ?"));
  st.Bind(1, task_id);
  ASSIGN_OR_RETURN(std::vector<TaskRow> rows, ReadRows(st));
  if (rows.empty()) return std::optional<TaskRow>();
  return std::optional<TaskRow>(std::move(rows.front()));
}

Result<std::optional<TaskRow>> UpdateTask(SqliteDb& db, const TaskUpdate& update, int64_t now_ms,
                                          bool* applied) {
  ASSIGN_OR_RETURN(
      Statement st,
      db.Prepare(std::string("UPDATE tasks SET status = ?1, status_message = coalesce(?2, "
                             "status_message), result_json = coalesce(?3, result_json), version "
                             "= coalesce(?4, version), error_json = coalesce(?5, error_json), "
                             "updated_ms = ?6 WHERE task_id = ?7 AND owner = ?8 AND (?9 = 0 OR "
                             "version IS NULL) AND ") +
                 kNotTerminal + " RETURNING " + kColumns));
  st.Bind(1, TaskStatusName(update.status));
  BindOptional(st, 2, update.status_message);
  BindOptional(st, 3, update.result_json);
  st.Bind(4, update.version);
  BindOptional(st, 5, update.error_json);
  st.Bind(6, now_ms).Bind(7, update.task_id).Bind(8, update.owner);
  st.Bind(9, static_cast<int64_t>(update.unless_committed ? 1 : 0));
  ASSIGN_OR_RETURN(std::vector<TaskRow> rows, ReadRows(st));
  *applied = !rows.empty();
  if (*applied) return std::optional<TaskRow>(std::move(rows.front()));
  ASSIGN_OR_RETURN(std::optional<TaskRow> row, LoadTask(db, update.task_id));
  if (row.has_value() && row->record.owner != update.owner) row.reset();
  return row;
}

Status ClaimForCommit(SqliteDb& db, const std::string& task_id, int64_t version) {
  ASSIGN_OR_RETURN(Statement st,
                   db.Prepare(std::string("UPDATE tasks SET version = ?1 WHERE task_id = ?2 AND "
                                          "version IS NULL AND ") +
                              kNotTerminal + " RETURNING task_id"));
  st.Bind(1, version).Bind(2, task_id);
  int64_t claimed = 0;
  RETURN_IF_ERROR(st.ForEachRow([&](Statement&) { ++claimed; }));
  if (claimed == 0) return TaskEndedBeforeCommitError(task_id);
  return Status::Ok();
}

Status ForgetSessionPayloads(SqliteDb& db, const std::string& session_id) {
  ASSIGN_OR_RETURN(Statement st, db.Prepare("UPDATE tasks SET request_json = '', result_json = '' "
                                            "WHERE session_id = ?"));
  st.Bind(1, session_id);
  return st.Run();
}

Result<std::vector<TaskRow>> ListTasks(SqliteDb& db, const std::string& owner,
                                       std::optional<std::pair<int64_t, std::string>> after,
                                       int limit, int64_t now_ms) {
  ASSIGN_OR_RETURN(
      Statement st,
      db.Prepare(std::string("SELECT ") + kColumns + " FROM tasks WHERE owner = ?1 AND NOT " +
                 kExpired + "?2) AND (?3 IS NULL OR created_ms < ?3 OR (created_ms = ?3 AND " +
                 "task_id < ?4)) ORDER BY created_ms DESC, task_id DESC LIMIT ?5"));
  st.Bind(1, owner).Bind(2, now_ms);
  if (after.has_value()) {
    st.Bind(3, after->first).Bind(4, after->second);
  } else {
    st.BindNull(3).BindNull(4);
  }
  st.Bind(5, static_cast<int64_t>(limit));
  return ReadRows(st);
}

Result<std::vector<TaskRow>> LoadOthersUnsettled(SqliteDb& db, const std::string& runner) {
  ASSIGN_OR_RETURN(Statement st,
                   db.Prepare(std::string("SELECT ") + kColumns + " FROM tasks WHERE " +
                              kNotTerminal + " AND runner <> ?"));
  st.Bind(1, runner);
  return ReadRows(st);
}

Result<int64_t> DeleteExpired(SqliteDb& db, int64_t now_ms) {
  ASSIGN_OR_RETURN(Statement st, db.Prepare(std::string("DELETE FROM tasks WHERE ") + kExpired +
                                            "?1) RETURNING task_id"));
  st.Bind(1, now_ms);
  int64_t n = 0;
  RETURN_IF_ERROR(st.ForEachRow([&](Statement&) { ++n; }));
  return n;
}

Result<std::vector<TaskRow>> GroupBatch(SqliteDb& db, const std::string& batch_model,
                                        const std::string& group, int limit,
                                        int64_t created_before_ms) {
  ASSIGN_OR_RETURN(
      Statement st,
      db.Prepare(std::string("UPDATE tasks SET batch_group = ?2 WHERE task_id IN (SELECT task_id "
                             "FROM tasks WHERE batch_model = ?1 AND batch_group = '' AND "
                             "status = 'working' AND created_ms <= ?3 ORDER BY created_ms, "
                             "task_id LIMIT ?4) RETURNING ") +
                 kColumns));
  st.Bind(1, batch_model).Bind(2, group).Bind(3, created_before_ms);
  st.Bind(4, static_cast<int64_t>(limit));
  return ReadRows(st);
}

Result<int64_t> SetBatchJob(SqliteDb& db, const std::string& group, const std::string& job) {
  ASSIGN_OR_RETURN(Statement st, db.Prepare("UPDATE tasks SET batch_job = ?2 WHERE batch_group = "
                                            "?1 AND batch_job = '' RETURNING task_id"));
  st.Bind(1, group).Bind(2, job);
  int64_t n = 0;
  RETURN_IF_ERROR(st.ForEachRow([&](Statement&) { ++n; }));
  return n;
}

Result<bool> UngroupBatchTask(SqliteDb& db, const std::string& group, const std::string& task_id) {
  ASSIGN_OR_RETURN(Statement st, db.Prepare("UPDATE tasks SET batch_group = '' WHERE task_id = ?2 "
                                            "AND batch_group = ?1 AND batch_job = '' RETURNING "
                                            "task_id"));
  st.Bind(1, group).Bind(2, task_id);
  bool ungrouped = false;
  RETURN_IF_ERROR(st.ForEachRow([&](Statement&) { ungrouped = true; }));
  return ungrouped;
}

Result<std::vector<TaskRow>> LoadOpenBatch(SqliteDb& db) {
  ASSIGN_OR_RETURN(Statement st, db.Prepare(std::string("SELECT ") + kColumns +
                                            " FROM tasks WHERE " + kNotTerminal +
                                            " AND batch_model <> '' ORDER BY created_ms, task_id"));
  return ReadRows(st);
}

}  // namespace tasks

// ---------------------------------------------------------------------------------------------
// SqliteTaskRows

namespace {

constexpr char kRunnerPrefix[] = "process:";
constexpr char kRunnerLockPrefix[] = ".runner-";
constexpr char kRunnerLockSuffix[] = ".lock";

}  // namespace

SqliteTaskRows::~SqliteTaskRows() {
  if (runner_lock_.has_value()) {
    RemoveFileQuietly(RunnerLockPath(runner_id_.substr(std::string(kRunnerPrefix).size())));
  }
}

std::filesystem::path SqliteTaskRows::RunnerLockPath(const std::string& runner_hex) const {
  return locks_dir_ / (kRunnerLockPrefix + runner_hex + kRunnerLockSuffix);
}

// A dead process's lock file can go: a reader that later finds it missing creates and locks a
// new one, and so still learns that the process is gone. Both this and the taking of a new
// process's lock happen under the store's open lock, so a file is never removed between its
// creation and its flock.
Status SqliteTaskRows::TakeRunnerLock() {
  const std::string prefix = kRunnerLockPrefix;
  std::vector<std::filesystem::path> found;  // listed first, removed after
  std::error_code ec;
  for (std::filesystem::directory_iterator it(locks_dir_, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code type_ec;  // like lstat: a link is not followed
    const std::filesystem::file_type type = it->symlink_status(type_ec).type();
    if (!type_ec && type != std::filesystem::file_type::directory &&
        it->path().filename().string().rfind(prefix, 0) == 0) {
      found.push_back(it->path());
    }
  }
  for (const std::filesystem::path& path : found) {
    ASSIGN_OR_RETURN(std::optional<FileLock> lock, FileLock::TryAcquire(path));
    if (lock.has_value()) RemoveFileQuietly(path);
  }
  const std::string hex = RandomHex(16);
  ASSIGN_OR_RETURN(std::optional<FileLock> own, FileLock::TryAcquire(RunnerLockPath(hex)));
  if (!own.has_value()) {
    return MakeError(ErrorCode::kInternal, "cannot take " + RunnerLockPath(hex).string());
  }
  runner_lock_ = std::move(own);
  runner_id_ = kRunnerPrefix + hex;
  return Status::Ok();
}

Result<bool> SqliteTaskRows::RunnerIsAlive(const std::string& runner) {
  const std::string prefix = kRunnerPrefix;
  const std::string hex = runner.rfind(prefix, 0) == 0 ? runner.substr(prefix.size()) : "";
  if (!IsValidTaskId(hex)) return false;  // not a runner of this store: nobody runs it
  if (runner == runner_id_) return true;
  std::error_code ec;
  if (!std::filesystem::exists(RunnerLockPath(hex), ec) && !ec) return false;  // removed: gone
  ASSIGN_OR_RETURN(std::optional<FileLock> lock, FileLock::TryAcquire(RunnerLockPath(hex)));
  return !lock.has_value();  // locked: the process still holds it
}

Status SqliteTaskRows::Insert(const TaskRow& row) {
  ASSIGN_OR_RETURN(SqlitePool::Lease lease, pool_.Acquire());
  return pool_.InWriteTransaction(lease.db(), [&]() { return tasks::InsertTask(lease.db(), row); });
}

Result<std::optional<TaskRow>> SqliteTaskRows::Load(const std::string& task_id) {
  ASSIGN_OR_RETURN(SqlitePool::Lease lease, pool_.Acquire());
  return tasks::LoadTask(lease.db(), task_id);
}

Result<std::optional<TaskRow>> SqliteTaskRows::Update(const TaskUpdate& update, int64_t now_ms,
                                                      bool* applied) {
  ASSIGN_OR_RETURN(SqlitePool::Lease lease, pool_.Acquire());
  std::optional<TaskRow> row;
  RETURN_IF_ERROR(pool_.InWriteTransaction(lease.db(), [&]() -> Status {
    ASSIGN_OR_RETURN(row, tasks::UpdateTask(lease.db(), update, now_ms, applied));
    return Status::Ok();
  }));
  return row;
}

Result<std::vector<TaskRow>> SqliteTaskRows::List(const std::string& owner,
                                                  const std::optional<After>& after, int limit,
                                                  int64_t now_ms) {
  ASSIGN_OR_RETURN(SqlitePool::Lease lease, pool_.Acquire());
  std::optional<std::pair<int64_t, std::string>> from;
  if (after.has_value()) from.emplace(after->created_ms, after->task_id);
  return tasks::ListTasks(lease.db(), owner, from, limit, now_ms);
}

Result<std::vector<TaskRow>> SqliteTaskRows::LoadOthersUnsettled(const std::string& runner) {
  ASSIGN_OR_RETURN(SqlitePool::Lease lease, pool_.Acquire());
  return tasks::LoadOthersUnsettled(lease.db(), runner);
}

Result<int64_t> SqliteTaskRows::DeleteExpired(int64_t now_ms) {
  ASSIGN_OR_RETURN(SqlitePool::Lease lease, pool_.Acquire());
  int64_t removed = 0;
  RETURN_IF_ERROR(pool_.InWriteTransaction(lease.db(), [&]() -> Status {
    ASSIGN_OR_RETURN(removed, tasks::DeleteExpired(lease.db(), now_ms));
    return Status::Ok();
  }));
  return removed;
}

Result<std::vector<TaskRow>> SqliteTaskRows::GroupBatch(const std::string& batch_model,
                                                        const std::string& group, int limit,
                                                        int64_t created_before_ms) {
  ASSIGN_OR_RETURN(SqlitePool::Lease lease, pool_.Acquire());
  std::vector<TaskRow> rows;
  RETURN_IF_ERROR(pool_.InWriteTransaction(lease.db(), [&]() -> Status {
    ASSIGN_OR_RETURN(rows,
                     tasks::GroupBatch(lease.db(), batch_model, group, limit, created_before_ms));
    return Status::Ok();
  }));
  return rows;
}

Result<int64_t> SqliteTaskRows::SetBatchJob(const std::string& group, const std::string& job) {
  ASSIGN_OR_RETURN(SqlitePool::Lease lease, pool_.Acquire());
  int64_t n = 0;
  RETURN_IF_ERROR(pool_.InWriteTransaction(lease.db(), [&]() -> Status {
    ASSIGN_OR_RETURN(n, tasks::SetBatchJob(lease.db(), group, job));
    return Status::Ok();
  }));
  return n;
}

Result<bool> SqliteTaskRows::UngroupBatchTask(const std::string& group,
                                              const std::string& task_id) {
  ASSIGN_OR_RETURN(SqlitePool::Lease lease, pool_.Acquire());
  bool ungrouped = false;
  RETURN_IF_ERROR(pool_.InWriteTransaction(lease.db(), [&]() -> Status {
    ASSIGN_OR_RETURN(ungrouped, tasks::UngroupBatchTask(lease.db(), group, task_id));
    return Status::Ok();
  }));
  return ungrouped;
}

namespace {

// The file stays (a successor locks the same file); only the lock goes with its holder.
class SqliteBatchPollLock final : public BatchPollLock {
 public:
  explicit SqliteBatchPollLock(FileLock lock) : lock_(std::move(lock)) {}
  bool Held() override { return true; }  // a flock is lost only with its holder

 private:
  FileLock lock_;
};

}  // namespace

Result<std::unique_ptr<BatchPollLock>> SqliteTaskRows::TryTakeBatchPollLock() {
  ASSIGN_OR_RETURN(std::optional<FileLock> lock,
                   FileLock::TryAcquire(locks_dir_ / ".batch-poller.lock"));
  if (!lock.has_value()) return std::unique_ptr<BatchPollLock>();
  return std::unique_ptr<BatchPollLock>(new SqliteBatchPollLock(std::move(*lock)));
}

Result<std::vector<TaskRow>> SqliteTaskRows::LoadOpenBatch() {
  ASSIGN_OR_RETURN(SqlitePool::Lease lease, pool_.Acquire());
  return tasks::LoadOpenBatch(lease.db());
}

}  // namespace imgmcp::session::sqlite
