// The embedded SessionStore: SQLite (WAL, synchronous=FULL) for metadata, one file per version,
// an in-process FIFO TurnQueue plus a flock per session for ordering, an LRU ImageCache for reads.
//
// Data directory layout (directories 0700, files 0600):
//   <data>/imgmcp.db (+ -wal, -shm)   SQLite, WAL, synchronous=FULL, busy_timeout, foreign keys;
//                                     tables schema_version, sessions, versions (session/schema.h)
//   <data>/images/<session_id>/v<N><ext>   the bytes of version N, exactly as committed
//   <data>/images/<session_id>/.tmp-*      a commit in flight (swept at start-up if left behind)
//   <data>/locks/<session_id>.lock    flock(LOCK_EX) held for the whole turn; never deleted
// A version exists once its row exists; its file is written and fsynced (file and directory)
// before the row is committed, so a crash leaves either the old state or the new one. Start-up
// removes temp files and files without a row, taking each session's lock so that a commit in
// flight in another process is left alone. Version numbers come from sessions.last_version and
// are never reused — not after a clear, nor after idle expiry (the session row stays, expired).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "session/data_dir.h"
#include "session/image_cache.h"
#include "session/session_store.h"
#include "session/sqlite_db.h"
#include "session/turn_queue.h"

namespace imgmcp::session {

class SqliteSessionStore final : public SessionStore {
 public:
  // What OpenSessionStore does; also exposes the concrete type to tests.
  static Result<std::unique_ptr<SqliteSessionStore>> Open(const StoreOptions& options,
                                                          const Clock& clock);
  ~SqliteSessionStore() override;

  Result<std::unique_ptr<EditTurn>> AcquireTurn(const std::string& session_id,
                                                const TurnOptions& options) override;
  Result<std::unique_ptr<TurnReservation>> ReserveTurn(const std::string& session_id) override;
  Result<std::unique_ptr<EditTurn>> AcquireReservedTurn(
      std::unique_ptr<TurnReservation> reservation, const TurnOptions& options) override;
  Result<VersionInfo> GetVersion(const std::string& session_id,
                                 std::optional<int64_t> version) override;
  Result<std::string> ReadImage(const VersionInfo& version) override;
  Result<SessionSnapshot> ReadSession(const std::string& session_id, std::optional<int64_t> version,
                                      bool include_history) override;
  Result<SessionPage> ListSessions(const std::optional<std::string>& cursor, int limit) override;
  bool SessionExists(const std::string& session_id) override;

  // Diagnostics and tests.
  const DataDirLayout& layout() const { return layout_; }
  const ImageCache& cache() const { return cache_; }
  // Edits holding or waiting for a turn of `session_id` in this process.
  int QueuedTurns(const std::string& session_id) const { return turns_.LineLength(session_id); }

 private:
  friend class SqliteEditTurn;

  // A pooled connection, handed back to the pool when the lease ends.
  class Lease {
   public:
    Lease(SqliteSessionStore* store, std::unique_ptr<SqliteDb> db)
        : store_(store), db_(std::move(db)) {}
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    SqliteDb& db() { return *db_; }

   private:
    SqliteSessionStore* store_;
    std::unique_ptr<SqliteDb> db_;
  };

  SqliteSessionStore(const StoreOptions& options, const Clock& clock);
  Status Initialize();
  Result<Lease> Connection();
  Result<std::unique_ptr<SqliteDb>> OpenConnection();
  Status ExpireIdleSessions();
  Status SweepOrphans();
  int64_t NowMs() const;

  // Called by SqliteEditTurn while it holds the session's turn and flock.
  Result<std::vector<VersionInfo>> CommitInTurn(const std::string& session_id, int64_t last_issued,
                                                const std::vector<NewVersion>& versions);
  Status ClearInTurn(const std::string& session_id);

  // The steps of CommitInTurn, in order (see there).
  struct CommitPlan;
  Result<CommitPlan> PlanCommit(const std::string& session_id, int64_t last_issued,
                                const std::vector<NewVersion>& versions);
  Status WriteVersionFiles(const CommitPlan& plan);
  void DiscardVersionFiles(const CommitPlan& plan);
  Status UpsertRows(SqliteDb& db, const CommitPlan& plan);
  // Deletes the rows beyond retention; their (version, file) pairs, newest first.
  Result<std::vector<std::pair<int64_t, std::string>>> PruneRows(SqliteDb& db,
                                                                 const std::string& session_id);
  void RemovePrunedFiles(const std::string& session_id,
                         const std::vector<std::pair<int64_t, std::string>>& pruned);
  void CacheCommitted(const CommitPlan& plan);
  static std::vector<VersionInfo> CommittedVersions(const CommitPlan& plan);

  const StoreOptions options_;
  const Clock& clock_;
  const DataDirLayout layout_;
  TurnQueue turns_;
  ImageCache cache_;

  // Serialises this process's SQLite write transactions: in-process writers wait here and are
  // woken at once, instead of polling in SQLite's busy handler (which sleeps in growing steps).
  // Other processes are still held off by SQLite's own lock and busy_timeout. Guards no data.
  std::mutex write_mu_;

  std::mutex pool_mu_;  // guards idle_connections_
  std::vector<std::unique_ptr<SqliteDb>> idle_connections_;
};

}  // namespace imgmcp::session
