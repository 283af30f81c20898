// The embedded SessionStore: SQLite (WAL, synchronous=FULL) for metadata, one file per version,
// an in-process FIFO TurnQueue plus a flock per session for ordering. The commit path, reads and
// listing are ChainStore's; this class supplies the SQLite and file operations.
//
// Data directory layout (directories 0700, files 0600):
//   <data>/imgmcp.db (+ -wal, -shm)   SQLite, WAL, synchronous=FULL, busy_timeout, foreign keys;
//                                     tables schema_version, sessions, versions, idempotency_keys
//                                     tasks, spend (session/sqlite/schema.h)
//   <data>/images/<session_id>/v<N><ext>   the bytes of version N, exactly as committed
//   <data>/images/<session_id>/.tmp-*      a commit in flight (swept at start-up if left behind)
//   <data>/locks/<session_id>.lock    flock(LOCK_EX) held for the whole turn; never deleted
//   <data>/locks/.runner-<id>.lock    flock(LOCK_EX) held by one store process for its lifetime:
//                                     the liveness of the tasks it runs (runner "process:<id>").
//                                     A reader that can lock it knows the process is gone and
//                                     settles its tasks, as when the file is missing. A store
//                                     removes its own when closed; an open removes those no one
//                                     holds (left by a killed process).
// A version exists once its row exists; its file is written and fsynced (file and directory)
// before the row is committed, so a crash leaves either the old state or the new one. Start-up
// removes temp files and files without a row, taking each session's lock so that a commit in
// flight in another process is left alone. Version numbers come from sessions.last_version and
// are never reused — not after a clear, nor after idle expiry (the session row stays, expired).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "session/chain_store.h"
#include "session/data_dir.h"
#include "session/sqlite/file_lock.h"
#include "session/sqlite/sqlite_db.h"
#include "session/sqlite/sqlite_pool.h"
#include "session/sqlite/sqlite_tasks.h"
#include "session/sqlite/turn_queue.h"

namespace imgmcp::session::sqlite {

class SqliteSessionStore final : public ChainStore {
 public:
  // What OpenSessionStore does; also exposes the concrete type to tests.
  static Result<std::unique_ptr<SqliteSessionStore>> Open(const StoreOptions& options,
                                                          const Clock& clock);
  ~SqliteSessionStore() override;

  Result<std::unique_ptr<TurnReservation>> ReserveTurn(const std::string& session_id) override;

  // The spend ledger (sqlite_spend.h), each call in its own transaction.
  Result<int64_t> ReserveSpend(const SpendHold& hold, const SpendBudgets& budgets) override;
  Status SettleSpend(int64_t id, const SpendCharge& charge) override;
  Status RenewSpendHold(int64_t id, int64_t expires_ms) override;
  Status ReleaseSpend(int64_t id) override;
  Result<SpendTotals> SpendTotalsFor(const SpendHold& hold) override;
  Result<int64_t> CountCall(const std::string& principal, int64_t window_ms,
                            int64_t forget_before_ms) override;
  Result<std::string> SharedKey(const std::string& name, const std::string& candidate) override;
  Status RecordAudit(const AuditEvent& event) override;
  Result<std::vector<AuditEvent>> ReadAudit(const AuditQuery& query) override;
  Result<int64_t> ForgetAudit(int64_t before_ms) override;

  // Diagnostics and tests.
  const DataDirLayout& layout() const { return layout_; }
  // Edits holding or waiting for a turn of `session_id` in this process.
  int QueuedTurns(const std::string& session_id) const { return turns_.LineLength(session_id); }

 private:
  using Lease = SqlitePool::Lease;
  class SqliteTurnHold;

  SqliteSessionStore(const StoreOptions& options, const Clock& clock);
  Status Initialize();
  Result<std::unique_ptr<SqliteDb>> PrepareDatabase();
  Status ExpireIdleSessions();
  Status ExpireIfIdle(SqliteDb& db, const std::string& session_id, int64_t cutoff_ms);
  Status SweepOrphans();
  Status SweepSession(SqliteDb& db, const std::string& session_id);
  Status WriteVersionFiles(const CommitPlan& plan, const std::vector<std::string>& files);
  void DiscardVersionFiles(const CommitPlan& plan, const std::vector<std::string>& files);

  // ChainStore's storage operations.
  Result<std::unique_ptr<TurnHold>> WaitForTurn(std::unique_ptr<TurnReservation> reservation,
                                                const TurnOptions& options) override;
  Result<TurnStart> ReadTurnStart(const std::string& session_id) override;
  Result<std::vector<RemovedVersion>> WriteCommit(TurnHold& turn, const CommitPlan& plan) override;
  Result<std::vector<RemovedVersion>> WriteClear(TurnHold& turn, const ClearPlan& plan) override;
  void DeleteRemoved(const std::string& session_id, const std::vector<RemovedVersion>& removed,
                     bool whole_session) override;
  std::filesystem::path VersionPath(const std::string& session_id, int64_t version,
                                    const std::string& extension) const override;
  Result<SessionSnapshot> LoadSession(const std::string& session_id, std::optional<int64_t> version,
                                      bool include_history) override;
  Result<StoredBytes> LoadBytes(const VersionInfo& version) override;
  Result<bool> VersionExists(const std::string& session_id, int64_t version) override;
  Result<std::vector<ListedSession>> ListSessionRows(const std::string& principal,
                                                     const std::optional<ListAfter>& after,
                                                     int limit) override;
  Result<bool> SessionIsLive(const std::string& session_id) override;
  Result<std::optional<AppliedKey>> LoadAppliedKey(const std::string& session_id,
                                                   const std::string& key) override;
  TaskRows& task_rows() override { return task_rows_; }

  const DataDirLayout layout_;
  TurnQueue turns_;
  SqlitePool pool_;
  SqliteTaskRows task_rows_;  // and this process's runner lock (sqlite_tasks.h)
};

// Opens (creating if needed) the SQLite store in options.data_dir: migrates the schema, sweeps
// orphans.
Result<std::unique_ptr<SessionStore>> OpenSessionStore(const StoreOptions& options,
                                                       const Clock& clock);

}  // namespace imgmcp::session::sqlite
