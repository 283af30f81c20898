// PgTaskRows: PostgresSessionStore's task rows (imgmcp.tasks, pg_schema.h v3) and the liveness of
// their runners, as the TaskRows that ChainTasks (session/chain_tasks.h) works over. A runner is
// a replica, "replica:<id>", alive while its listener connection holds the advisory lock
// (kAdvisoryNamespace, replica id) (pg_turns.h), so a replica that can take that lock shared knows
// the runner is gone. Every row written is announced (NOTIFY imgmcp_tasks, in the same
// statement) to the other replicas' task listeners, and to this replica's too when the row is
// another runner's. Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/thread_annotations.h"
#include "session/chain_tasks.h"
#include "session/postgres/pg_connection.h"
#include "session/postgres/pg_turns.h"
#include "session/session_store.h"

namespace imgmcp::session::postgres {

class PgTaskRows final : public TaskRows {
 public:
  // `origin`: the store's token in imgmcp_tasks payloads (its own rows are not reported to it).
  PgTaskRows(PgPool& pool, std::string origin) : pool_(pool), origin_(std::move(origin)) {}

  // The store's turns, once they run (PostgresSessionStore::Initialize): before any row
  // operation. They tell this replica's id and order a new row after the draws before it.
  void UseTurns(PgTurns& turns) { turns_ = &turns; }

  // SessionStore::SetTaskListener.
  void SetListener(TaskListener listener);
  // A NOTIFY imgmcp_tasks payload, "<origin> <task_id> <status> <owner>" (origin "-" for a row of
  // a task another replica runs, reported by every replica), from the listener's thread.
  void OnNotification(const std::string& payload);

  Result<std::string> RunnerId() override;
  std::string_view RunnerKind() const override { return "replica"; }
  Result<bool> RunnerIsAlive(const std::string& runner) override;
  Status ReleaseRunner(const std::string& runner) override;
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
  // The advisory lock (kAdvisoryNamespace, kBatchPollLockKey) on a new connection that the lock
  // keeps: a pooled one would hand it on to whoever leases the connection next.
  Result<std::unique_ptr<BatchPollLock>> TryTakeBatchPollLock() override;

 private:
  PgPool& pool_;
  const std::string origin_;
  PgTurns* turns_ = nullptr;  // set by UseTurns before the store is shared; read-only afterwards

  Mutex listener_mu_;  // guards listener_; held while it runs
  TaskListener listener_ GUARDED_BY(listener_mu_);
};

// Claims the row of `task_id` for a commit of `version` (CommitPlan::claims_task) in the commit's
// transaction on `conn`: sets its version while it is not terminal and has none.
// TaskEndedBeforeCommitError when there is no such row.
Status ClaimTaskForCommit(PgConnection& conn, const std::string& task_id, int64_t version);

}  // namespace imgmcp::session::postgres
