// The embedded store's tasks (table tasks, session/sqlite/schema.h v5): the SQL on one SqliteDb
// (namespace tasks), and SqliteTaskRows, the store's TaskRows with the liveness of its runner. No
// rules: ChainTasks (session/chain_tasks.h) decides what is asked.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "session/chain_tasks.h"
#include "session/sqlite/file_lock.h"
#include "session/sqlite/sqlite_db.h"
#include "session/sqlite/sqlite_pool.h"
#include "session/task_rules.h"

namespace imgmcp::session::sqlite {

// The task rows in the database of `pool`, each write in its own write transaction. A runner is a
// process, "process:<32 hex>", alive while it holds an exclusive flock on
// <locks dir>/.runner-<hex>.lock (sqlite_session_store.h, "Data directory layout").
class SqliteTaskRows final : public TaskRows {
 public:
  SqliteTaskRows(SqlitePool& pool, std::filesystem::path locks_dir)
      : pool_(pool), locks_dir_(std::move(locks_dir)) {}
  // Removes this process's runner lock file while still holding it, so nobody ever finds a closed
  // store's file locked; a reader that looks afterwards finds no file: the runner is gone.
  ~SqliteTaskRows() override;

  // Under the store's open lock: removes the runner lock files of processes that are gone, then
  // takes this process's own (RunnerId is set from then on).
  Status TakeRunnerLock();

  Result<std::string> RunnerId() override { return runner_id_; }
  std::string_view RunnerKind() const override { return "process"; }
  Result<bool> RunnerIsAlive(const std::string& runner) override;
  Status Insert(const TaskRow& row) override;
  Result<std::optional<TaskRow>> Load(const std::string& task_id) override;
  Result<std::optional<TaskRow>> Update(const TaskUpdate& update, int64_t now_ms,
                                        bool* applied) override;
  Result<std::vector<TaskRow>> List(const std::string& owner, const std::optional<After>& after,
                                    int limit, int64_t now_ms) override;
  Result<std::vector<TaskRow>> LoadOthersUnsettled(const std::string& runner) override;
  Result<int64_t> DeleteExpired(int64_t now_ms) override;
  Result<std::vector<TaskRow>> GroupBatch(const std::string& batch_model, const std::string& group,
                                          int limit, int64_t created_before_ms) override;
  Result<int64_t> SetBatchJob(const std::string& group, const std::string& job) override;
  Result<bool> UngroupBatchTask(const std::string& group, const std::string& task_id) override;
  Result<std::vector<TaskRow>> LoadOpenBatch() override;
  // An exclusive flock on <locks dir>/.batch-poller.lock, taken without waiting.
  Result<std::unique_ptr<BatchPollLock>> TryTakeBatchPollLock() override;

 private:
  std::filesystem::path RunnerLockPath(const std::string& runner_hex) const;

  SqlitePool& pool_;
  const std::filesystem::path locks_dir_;
  // Set once by TakeRunnerLock, before the store is shared; read-only afterwards.
  std::string runner_id_;                // "process:<32 hex>"
  std::optional<FileLock> runner_lock_;  // held for the store's lifetime
};

namespace tasks {

Status InsertTask(SqliteDb& db, const TaskRow& row);
Result<std::optional<TaskRow>> LoadTask(SqliteDb& db, const std::string& task_id);
// One statement: the update applies only to the owner's row that is not terminal. The row as it
// is afterwards (nullopt: no row of this owner); *applied says whether it changed.
Result<std::optional<TaskRow>> UpdateTask(SqliteDb& db, const TaskUpdate& update, int64_t now_ms,
                                          bool* applied);
// Claims the task's row for a commit (CommitPlan::claims_task): sets its version while it is not
// terminal and has none. TaskEndedBeforeCommitError when there is no such row. Run inside the
// commit's write transaction.
Status ClaimForCommit(SqliteDb& db, const std::string& task_id, int64_t version);
// Empties the request and result kept in the rows of `session_id`'s tasks (a reset: what the
// tasks said of the session's images goes with them). Statuses and versions stay.
Status ForgetSessionPayloads(SqliteDb& db, const std::string& session_id);
// The owner's rows not expired at now_ms, newest first, after (after_ms, after_id) when given.
Result<std::vector<TaskRow>> ListTasks(SqliteDb& db, const std::string& owner,
                                       std::optional<std::pair<int64_t, std::string>> after,
                                       int limit, int64_t now_ms);
// Rows that are not terminal, of runners other than `runner`.
Result<std::vector<TaskRow>> LoadOthersUnsettled(SqliteDb& db, const std::string& runner);
// Deletes the rows expired at now_ms; returns how many.
Result<int64_t> DeleteExpired(SqliteDb& db, int64_t now_ms);
// Batch rows (TaskRows::GroupBatch, SetBatchJob, LoadOpenBatch), each one statement.
Result<std::vector<TaskRow>> GroupBatch(SqliteDb& db, const std::string& batch_model,
                                        const std::string& group, int limit,
                                        int64_t created_before_ms);
Result<int64_t> SetBatchJob(SqliteDb& db, const std::string& group, const std::string& job);
Result<bool> UngroupBatchTask(SqliteDb& db, const std::string& group, const std::string& task_id);
Result<std::vector<TaskRow>> LoadOpenBatch(SqliteDb& db);

}  // namespace tasks
}  // namespace imgmcp::session::sqlite
