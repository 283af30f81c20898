// PostgresSessionStore: the SessionStore for many replicas on one PostgreSQL database
// (--store postgresql://…, DESIGN.md §3).
//
// Data: rows in the schema imgmcp (pg_schema.h). A version's image bytes live in imgmcp.blobs,
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
// Changes made by other replicas arrive as NOTIFY imgmcp_commits and go to SetChangeListener.
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
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "session/image_cache.h"
#include "session/postgres/pg_connection.h"
#include "session/postgres/pg_turns.h"
#include "session/session_store.h"

namespace imgmcp::session::postgres {

struct PostgresStoreOptions {
  std::string url;  // postgresql://user@host:port/db?… (or libpq key=value); may hold a password
  int pool_size = 10;  // connections at most, besides the listener and watchers
};

// True for what --store / IMGMCP_STORE take as a PostgreSQL connection URL.
bool IsPostgresUrl(const std::string& store);

class PostgresSessionStore final : public SessionStore {
 public:
  // Connects, migrates (pg_schema.h), starts listening, expires idle sessions (idle_days).
  // options.data_dir holds the local cache. Errors name the server, never the password.
  static Result<std::unique_ptr<PostgresSessionStore>> Open(const StoreOptions& options,
                                                            const PostgresStoreOptions& pg,
                                                            const Clock& clock);
  ~PostgresSessionStore() override;

  Result<std::unique_ptr<TurnReservation>> ReserveTurn(const std::string& session_id) override;
  Result<std::unique_ptr<EditTurn>> AcquireReservedTurn(
      std::unique_ptr<TurnReservation> reservation, const TurnOptions& options) override;
  Result<std::unique_ptr<EditTurn>> AcquireTurn(const std::string& session_id,
                                                const TurnOptions& options) override;
  Result<VersionInfo> GetVersion(const std::string& session_id,
                                 std::optional<int64_t> version) override;
  Result<std::string> ReadImage(const VersionInfo& version) override;
  Result<SessionSnapshot> ReadSession(const std::string& session_id, std::optional<int64_t> version,
                                      bool include_history) override;
  Result<SessionPage> ListSessions(const std::optional<std::string>& cursor, int limit) override;
  bool SessionExists(const std::string& session_id) override;
  void SetChangeListener(ChangeListener listener) override;

  // Diagnostics and tests.
  const std::filesystem::path& cache_dir() const { return cache_dir_; }
  int64_t replica_id() const { return turns_->replica_id(); }
  const std::string& label() const { return pool_.label(); }

 private:
  friend class PgEditTurn;
  struct CommitPlan;

  PostgresSessionStore(const StoreOptions& options, const PostgresStoreOptions& pg,
                       std::string label, const Clock& clock);
  Status Initialize();
  Status ExpireIdleSessions();
  void OnCommitNotification(const std::string& payload);
  int64_t NowMs() const;

  // A read on a pooled connection, tried once more on a fresh one when the first connection
  // turns out to be dead (PostgreSQL restarted since it was last used).
  template <typename T, typename Fn>
  Result<T> WithReadConnection(Fn&& fn);

  // Called by PgEditTurn while it holds the turn.
  Result<std::vector<VersionInfo>> CommitInTurn(const PgTicket& ticket, int64_t last_issued,
                                                const std::vector<NewVersion>& versions);
  Status ClearInTurn(const PgTicket& ticket);
  // The steps of CommitInTurn (see there).
  Result<CommitPlan> PlanCommit(const PgTicket& ticket, int64_t last_issued,
                                const std::vector<NewVersion>& versions);
  Status WriteRows(PgConnection& conn, const CommitPlan& plan,
                   std::vector<std::pair<int64_t, std::string>>* pruned);
  // After COMMIT failed on a broken connection: Ok if the commit happened after all.
  Status CheckOutcome(const CommitPlan& plan, const Error& commit_error);
  void ForgetPruned(const std::string& session_id,
                    const std::vector<std::pair<int64_t, std::string>>& pruned);
  void CacheCommitted(const CommitPlan& plan);
  std::vector<VersionInfo> CommittedVersions(const CommitPlan& plan) const;

  // Deletes the blobs among `digests` that no version refers to any more (best effort).
  void CollectBlobs(const std::vector<std::string>& digests);
  // The local copy of `version` exists at version.path (written from the bytes if not).
  Status EnsureLocalCopy(const VersionInfo& version);
  std::filesystem::path LocalPath(const std::string& session_id, int64_t version,
                                  const std::string& extension) const;

  const StoreOptions options_;
  const Clock& clock_;
  const std::string origin_;  // this store's token in imgmcp_commits payloads
  PgPool pool_;
  std::filesystem::path cache_dir_;  // set by Initialize
  ImageCache cache_;
  std::unique_ptr<PgTurns> turns_;

  std::mutex listener_mu_;  // guards listener_; held while it runs
  ChangeListener listener_;
};

}  // namespace imgmcp::session::postgres
