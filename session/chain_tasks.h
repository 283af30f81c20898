// The tasks every ChainStore keeps the same way (session_store.h "Tasks", docs/design.md §3
// "Tasks"): ChainTasks holds the rules — ids, owners, the terminal rule, expiry, paging and the
// settling of tasks whose runner died — over TaskRows, the row operations a store supplies
// (SQLite: sqlite/sqlite_tasks.h SqliteTaskRows; PostgreSQL: postgres/pg_tasks.h PgTaskRows).
// ChainStore's SessionStore task methods forward here.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "session/session_store.h"
#include "session/task_rules.h"

namespace imgmcp::session {

// Who polls a store's batch jobs: one holder at a time across every process, replica and store on
// the same data (SQLite: an exclusive flock on <locks dir>/.batch-poller.lock; PostgreSQL: the
// advisory lock (kAdvisoryNamespace, kBatchPollLockKey) on a connection of its own). Released by
// the destructor, or by the system when its holder dies (the kernel drops the flock, PostgreSQL
// the lock with the connection), so a successor can take over.
class BatchPollLock {
 public:
  virtual ~BatchPollLock() = default;
  // False once the lock may have been lost (PostgreSQL: its connection broke): the holder stops
  // polling and takes the lock again before it goes on.
  virtual bool Held() = 0;
};

// A store's task rows (task_rules.h TaskRow) and the liveness of their runners. Thread-safe: every
// operation may be called concurrently.
class TaskRows {
 public:
  virtual ~TaskRows() = default;

  // Who runs tasks created through this store (TaskRecord::runner): this process (SQLite) or this
  // replica (PostgreSQL); kUnavailable while it has none.
  virtual Result<std::string> RunnerId() = 0;
  // "process" or "replica": what a runner is, for the message of a task whose runner died.
  virtual std::string_view RunnerKind() const = 0;
  // Whether `runner` (another store's RunnerId) still lives. A runner that is gone never comes
  // back.
  virtual Result<bool> RunnerIsAlive(const std::string& runner) = 0;
  // Before settling a dead runner's task: gives back what the runner still held (PostgreSQL: its
  // turn tickets, so that no commit of it can land afterwards).
  virtual Status ReleaseRunner(const std::string& runner) { return Status::Ok(); }

  // Inserts a new row (its id is fresh).
  virtual Status Insert(const TaskRow& row) = 0;
  // The row of `task_id`, whatever its owner or age; nullopt when there is none.
  virtual Result<std::optional<TaskRow>> Load(const std::string& task_id) = 0;
  // In one statement: applies `update` (status; the optional fields replace the row's; updated_ms
  // = now_ms) if the row exists, is the owner's and is not terminal. Sets *applied, and returns
  // the row as it is afterwards (nullopt: no row of this owner).
  virtual Result<std::optional<TaskRow>> Update(const TaskUpdate& update, int64_t now_ms,
                                                bool* applied) = 0;
  // The owner's rows not expired at now_ms, newest (created_ms, task_id) first, after `after`.
  struct After {
    int64_t created_ms = 0;
    std::string task_id;
  };
  virtual Result<std::vector<TaskRow>> List(const std::string& owner,
                                            const std::optional<After>& after, int limit,
                                            int64_t now_ms) = 0;
  // Every row that is not terminal and is run by another runner than `runner`.
  virtual Result<std::vector<TaskRow>> LoadOthersUnsettled(const std::string& runner) = 0;
  // Deletes the rows expired at now_ms (TaskExpired); returns how many.
  virtual Result<int64_t> DeleteExpired(int64_t now_ms) = 0;

  // Batch tasks (batch_tasks.h). In one statement: puts up to `limit` working rows of
  // `batch_model` without a group, created at or before `created_before_ms`, into `group`, oldest
  // (created_ms, task_id) first; returns them, in any order. Two calls never put one row in two
  // groups.
  virtual Result<std::vector<TaskRow>> GroupBatch(const std::string& batch_model,
                                                  const std::string& group, int limit,
                                                  int64_t created_before_ms) = 0;
  // Sets batch_job on the rows of `group` that have none; returns how many.
  virtual Result<int64_t> SetBatchJob(const std::string& group, const std::string& job) = 0;
  // Takes the row `task_id` out of `group` while the group has no job: it waits again (its
  // creation time kept). Returns whether it did.
  virtual Result<bool> UngroupBatchTask(const std::string& group, const std::string& task_id) = 0;
  // Every batch row (batch_model set) that is not terminal, oldest first.
  virtual Result<std::vector<TaskRow>> LoadOpenBatch() = 0;
  // The store's batch poll lock (batch_tasks.h BatchPollLock) if nobody holds it; nullptr when
  // another holder (process, replica or store) does.
  virtual Result<std::unique_ptr<BatchPollLock>> TryTakeBatchPollLock() = 0;
};

// The task methods of SessionStore (see there for what each answers) over `rows`. Holds only
// references: ChainStore makes one per call. `sessions` is the store itself, whose
// FindAppliedKey tells what a dead runner's task committed.
class ChainTasks {
 public:
  ChainTasks(TaskRows& rows, const Clock& clock, SessionStore& sessions)
      : rows_(rows), clock_(clock), sessions_(sessions) {}

  Result<TaskRecord> Create(const NewTask& task);
  Result<std::optional<TaskRecord>> Get(const std::string& task_id, const std::string& owner);
  Result<TaskRecord> Update(const TaskUpdate& update);
  Result<TaskPage> List(const std::string& owner, const std::optional<std::string>& cursor,
                        int limit);
  Result<int64_t> Sweep();

 private:
  // A task that is not terminal and whose runner is gone is settled: completed with the version
  // its key committed, else failed. Returns the row as it is afterwards. `own_runner` is this
  // store's runner id (never settled).
  Result<TaskRow> SettleIfOrphaned(TaskRow row, const std::string& own_runner);
  Result<TaskRow> SettleOrphan(const TaskRow& row);

  TaskRows& rows_;
  const Clock& clock_;
  SessionStore& sessions_;
};

}  // namespace imgmcp::session
