// PostgresSessionStore: the SessionStore for many replicas on one PostgreSQL database
// (--store postgresql://…; see README.md "Many replicas, one PostgreSQL"). The commit path, reads
// and listing are ChainStore's; this class supplies the PostgreSQL operations.
//
// Data: rows in the schema imgmcp (pg_schema.h); an idempotency key is a row written in its
// commit's or clear's transaction. A version's image bytes live in imgmcp.blobs,
// keyed by their sha256, so a revert (or any repeat of the same bytes) stores no second copy;
// blobs no version refers to any more are deleted after the prune or clear that freed them.
// A commit writes the blobs, the version rows, the session's counter (a compare-and-set against
// the number the turn started from), the retention prune and a NOTIFY in one transaction, under
// synchronous_commit=on: it is reported only once PostgreSQL has it on disk, and a failure at any
// point commits nothing. When the connection breaks during COMMIT the outcome is looked up before
// answering. Reads are single statements (one snapshot each).
//
// Turns: PgTurns (pg_turns.h) — tickets in arrival order across replicas, woken by LISTEN/NOTIFY,
// released when a replica's connection dies. A commit also checks, FOR SHARE, that its turn's
// ticket still exists, so a replica that lost its place can never commit over the next one.
//
// Changes made by other replicas arrive as NOTIFY imgmcp_commits and go to SetChangeListener; task
// rows they write (and rows of their tasks written here) arrive as NOTIFY imgmcp_tasks and go to
// SetTaskListener.
//
// `path` of a version is this replica's local copy, <data dir>/pg-cache/<store id>/<session>/
// v<N><ext>, written on demand: Commit, GetVersion and ReadSession (its `version`) make sure it
// exists before they return (fetching the bytes once); History and ListSessions name where it
// would be. The store id (imgmcp.meta) keeps copies of two databases apart.
//
// Connections: a pool of at most pool_size (callers beyond it wait), plus one listener and, while
// another replica holds a place ahead of one of ours, one watcher per such replica. After
// PostgreSQL restarts, the listener reconnects (with a growing pause, at most 2 s) and the pool
// drops its dead connections; calls made while it is down fail with kUnavailable naming the
// server; the process stays up.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "common/thread_annotations.h"
#include "session/chain_store.h"
#include "session/postgres/pg_audit.h"
#include "session/postgres/pg_connection.h"
#include "session/postgres/pg_spend.h"
#include "session/postgres/pg_tasks.h"
#include "session/postgres/pg_turns.h"

namespace imgmcp::session::postgres {

struct PostgresStoreOptions {
  std::string url;  // postgresql://user@host:port/db?… (or libpq key=value); may hold a password
  int pool_size = 10;  // connections at most, besides the listener and watchers
};

// True for what --store / IMGMCP_STORE take as a PostgreSQL connection URL.
bool IsPostgresUrl(const std::string& store);

// One connection attempt, at start-up: Ok when PostgreSQL at `url` accepts it; kUnavailable when it
// cannot be reached yet (down, unreachable, the database not created yet: the store's open keeps
// retrying); any other code for what no retry heals — authentication, a bad option value. The
// message names the server, never the password.
Status ProbePostgres(const std::string& url);

class PostgresSessionStore final : public ChainStore {
 public:
  // Connects, migrates (pg_schema.h), starts listening, expires idle sessions (idle_days).
  // options.data_dir holds the local cache. Errors name the server, never the password.
  static Result<std::unique_ptr<PostgresSessionStore>> Open(const StoreOptions& options,
                                                            const PostgresStoreOptions& pg,
                                                            const Clock& clock);
  ~PostgresSessionStore() override;

  Result<std::unique_ptr<TurnReservation>> ReserveTurn(const std::string& session_id) override;
  void SetChangeListener(ChangeListener listener) override;
  void SetTaskListener(TaskListener listener) override;
  // The spend ledger (pg_spend.h).
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
  const std::filesystem::path& cache_dir() const { return cache_dir_; }
  int64_t replica_id() const { return turns_->replica_id(); }

 private:
  class PgTurnHold;

  PostgresSessionStore(const StoreOptions& options, const PostgresStoreOptions& pg,
                       std::string label, const Clock& clock);
  Status Initialize();
  Status ExpireIdleSessions();
  void OnCommitNotification(const std::string& payload);

  // A read on a pooled connection, tried once more on a fresh one when the first connection
  // turns out to be dead (PostgreSQL restarted since it was last used).
  template <typename T, typename Fn>
  Result<T> WithReadConnection(Fn&& fn);

  // The steps of WriteCommit.
  Status WriteRows(PgConnection& conn, const CommitPlan& plan, const PgTicket& ticket,
                   std::vector<RemovedVersion>* pruned);
  // After COMMIT failed on a broken connection: Ok if the commit happened after all.
  Status CheckOutcome(const CommitPlan& plan, const Error& commit_error);
  // Deletes the blobs among `digests` that no version refers to any more (best effort).
  void CollectBlobs(const std::vector<std::string>& digests);

  // ChainStore's storage operations: the turn,
  Result<std::unique_ptr<TurnHold>> WaitForTurn(std::unique_ptr<TurnReservation> reservation,
                                                const TurnOptions& options) override;
  Result<TurnStart> ReadTurnStart(const std::string& session_id) override;
  // reads (postgres_store_reads.cpp),
  Result<SessionSnapshot> LoadSession(const std::string& session_id, std::optional<int64_t> version,
                                      bool include_history) override;
  Status Materialize(const VersionInfo& version) override;  // the local copy
  std::filesystem::path VersionPath(const std::string& session_id, int64_t version,
                                    const std::string& extension) const override;
  Result<StoredBytes> LoadBytes(const VersionInfo& version) override;
  Result<bool> SessionIsLive(const std::string& session_id) override;
  Result<bool> VersionExists(const std::string& session_id, int64_t version) override;
  Result<std::vector<ListedSession>> ListSessionRows(const std::string& principal,
                                                     const std::optional<ListAfter>& after,
                                                     int limit) override;
  Result<std::optional<AppliedKey>> LoadAppliedKey(const std::string& session_id,
                                                   const std::string& key) override;
  // and writes, with what they leave behind (blobs, local copies).
  Result<std::vector<RemovedVersion>> WriteCommit(TurnHold& turn, const CommitPlan& plan) override;
  void AfterCommit(const CommitPlan& plan) override;
  Result<std::vector<RemovedVersion>> WriteClear(TurnHold& turn, const ClearPlan& plan) override;
  void DeleteRemoved(const std::string& session_id, const std::vector<RemovedVersion>& removed,
                     bool whole_session) override;
  // and the task rows (pg_tasks.h).
  TaskRows& task_rows() override { return task_rows_; }

  const std::string origin_;  // this store's token in imgmcp_commits and imgmcp_tasks payloads
  PgPool pool_;
  std::filesystem::path cache_dir_;  // set by Initialize
  std::unique_ptr<PgTurns> turns_;

  PgTaskRows task_rows_;  // with the task listener
  PgSpendLedger spend_;
  PgAuditTrail audit_;

  Mutex listener_mu_;  // guards listener_; held while it runs
  ChangeListener listener_ GUARDED_BY(listener_mu_);
};

}  // namespace imgmcp::session::postgres
