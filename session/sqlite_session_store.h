// The SessionStore implementation: SQLite (WAL, synchronous=FULL) for metadata, one file per
// version, an in-process FIFO TurnQueue plus a flock per session for ordering, an LRU ImageCache
// for reads and a SlotLimiter for backend calls. See session_store.h for the data-dir layout.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "session/data_dir.h"
#include "session/image_cache.h"
#include "session/session_store.h"
#include "session/slot_limiter.h"
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
  void RunWithBackendSlot(const std::function<void()>& fn) override;

  // Diagnostics and tests.
  const DataDirLayout& layout() const { return layout_; }
  const ImageCache& cache() const { return cache_; }
  // Edits holding or waiting for a turn of `session_id` in this process.
  int QueuedTurns(const std::string& session_id) const { return turns_.LineLength(session_id); }
  int BackendSlotsInUse() const { return backend_slots_.InUse(); }

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
  Result<VersionInfo> CommitInTurn(const std::string& session_id, int64_t last_issued,
                                   const NewVersion& version);
  Status ClearInTurn(const std::string& session_id);

  const StoreOptions options_;
  const Clock& clock_;
  const DataDirLayout layout_;
  TurnQueue turns_;
  ImageCache cache_;
  SlotLimiter backend_slots_;

  // Serialises this process's SQLite write transactions: in-process writers wait here and are
  // woken at once, instead of polling in SQLite's busy handler (which sleeps in growing steps).
  // Other processes are still held off by SQLite's own lock and busy_timeout. Guards no data.
  std::mutex write_mu_;

  std::mutex pool_mu_;  // guards idle_connections_
  std::vector<std::unique_ptr<SqliteDb>> idle_connections_;
};

}  // namespace imgmcp::session
