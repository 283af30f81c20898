// ChainStore: what every SessionStore does the same way, whatever keeps the data — the one home of
// the commit path (validate, number, hash, write, clean up after retention, cache, report), of the
// turn object an edit holds, of reads through the image cache with their integrity check, and of
// session listing pages. A concrete store (SqliteSessionStore, postgres::PostgresSessionStore)
// derives from it and supplies only its storage operations: how a turn is waited for and held,
// what the session looks like at the start of a turn, how a commit or a clear is written durably,
// how rows and bytes are read, what is left to delete afterwards, and its task rows (TaskRows:
// the task rules are ChainTasks', chain_tasks.h).
//
// Turns, across the three layers that order them (one explanation, here):
//   - In one process, edits of a session take a ticket from a FIFO line when they arrive
//     (ReserveTurn, on the protocol's reading thread) and wait for it (AcquireReservedTurn, on a
//     worker): session/sqlite/turn_queue.h. SQLite only.
//   - Between processes sharing one data directory, the turn holder also holds an exclusive flock
//     on the session's lock file, taken after its in-process ticket: session/sqlite/file_lock.h.
//     SQLite.
//   - Between replicas sharing one PostgreSQL database, the ticket is a row numbered in arrival
//     order, granted to the smallest, woken by LISTEN/NOTIFY and released when a replica's
//     connection dies: session/postgres/pg_turns.h. PostgreSQL.
// Whatever the layer, a turn is a TurnHold: destroying it gives the turn back. Every wait for a
// turn is woken (a release, a notification, or the caller's stop token), never polled.
//
// Thread safety: everything here is thread-safe; the image cache has its own lock. A store's own
// operations are called concurrently, except that one session's WriteCommit/WriteClear calls come
// one at a time from the holder of its turn.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "session/batch_tasks.h"
#include "session/chain_tasks.h"
#include "session/image_cache.h"
#include "session/session_store.h"
#include "session/task_rules.h"

namespace imgmcp::session {

// A commit as planned before anything is written: each new version with its number and digest,
// and the moment it is made.
struct CommitPlan {
  struct Planned {
    const NewVersion* source;
    int64_t number;
    std::string sha256;
  };
  std::string session_id;
  int64_t last_issued = 0;  // the session's counter when the turn started
  int64_t now_ms = 0;
  std::string created_at;  // RFC 3339 of now_ms
  std::vector<Planned> versions;
  std::optional<IdempotencyRecord> key;  // recorded with the last version, in the same transaction
  // The task whose commit this is (a key made by TaskIdempotencyKey), or "". The store claims the
  // task's row in the same transaction (sets its version while it is working or input_required
  // and has none); a row it cannot claim — the task was cancelled or stopped, or has no row —
  // refuses the whole commit (TaskEndedBeforeCommitError). The one decision between a commit and a
  // cancel (task_records.h TaskUpdate::unless_committed).
  std::string claims_task;
};

// A clear as planned: the session, its counter when the turn started, the moment, and the key to
// record with it.
struct ClearPlan {
  std::string session_id;
  int64_t last_issued = 0;
  int64_t now_ms = 0;
  std::optional<IdempotencyRecord> key;  // recorded with next_version last_issued + 1
};

// A version that a commit's retention prune, a clear or an expiry removed from the rows: what is
// left to delete once that is committed (a file, cached bytes, a blob no other version uses).
struct RemovedVersion {
  int64_t version = 0;
  std::string sha256;
  std::string file;  // the store's file name for it, when it has one
};

// A session row with its newest version, as a listing reads it.
struct ListedSession {
  std::string session_id;
  int64_t updated_ms = 0;
  std::optional<VersionInfo> current;
  int64_t version_count = 0;  // versions the session holds
};

// Checks what every store requires of its options: a data directory, retention >= 0. Returns the
// options with the data directory made absolute.
Result<StoreOptions> ResolveStoreOptions(const StoreOptions& options);

class ChainStore : public SessionStore {
 public:
  ~ChainStore() override;

  // SessionStore, the same for every store.
  Result<std::unique_ptr<EditTurn>> AcquireTurn(const std::string& session_id,
                                                const TurnOptions& options) final;
  Result<std::unique_ptr<EditTurn>> AcquireReservedTurn(
      std::unique_ptr<TurnReservation> reservation, const TurnOptions& options) final;
  Result<VersionInfo> GetVersion(const std::string& session_id,
                                 std::optional<int64_t> version) final;
  Result<std::string> ReadImage(const VersionInfo& version) final;
  Result<SessionSnapshot> ReadSession(const std::string& session_id, std::optional<int64_t> version,
                                      bool include_history) final;
  using SessionStore::ListSessions;
  Result<SessionPage> ListSessions(const std::string& principal,
                                   const std::optional<std::string>& cursor, int limit) final;
  bool SessionExists(const std::string& session_id) final;
  Result<std::optional<AppliedKey>> FindAppliedKey(const std::string& session_id,
                                                   const std::string& key) final;
  // Tasks: the rules and the settling of orphans are ChainTasks' (chain_tasks.h), over the
  // store's rows (task_rows()).
  Result<TaskRecord> CreateTask(const NewTask& task) final;
  Result<std::optional<TaskRecord>> GetTask(const std::string& task_id,
                                            const std::string& owner) final;
  Result<TaskRecord> UpdateTask(const TaskUpdate& update) final;
  Result<TaskPage> ListTasks(const std::string& owner, const std::optional<std::string>& cursor,
                             int limit) final;
  Result<int64_t> SweepTasks() final;
  // The batch tasks' rows (batch_tasks.h), for the store's batch poller.
  BatchTasks batch_tasks() { return BatchTasks(task_rows(), clock_); }

  const ImageCache& cache() const { return cache_; }

 protected:
  ChainStore(const StoreOptions& options, const Clock& clock);

  // The turn of one edit, held until destroyed.
  class TurnHold {
   public:
    virtual ~TurnHold() = default;
  };
  // The session when a turn starts: its counter and current version (nullopt: none, or expired).
  struct TurnStart {
    int64_t last_issued = 0;
    std::optional<VersionInfo> current;
  };
  // Where a read's bytes came from, for the integrity check's message.
  struct StoredBytes {
    std::string bytes;
    std::string recorded_sha256;
    std::string where;  // e.g. a file path, or "PostgreSQL at host/db"
  };

  // --- What each store supplies --------------------------------------------------------------
  // Waits for a reservation (from this store's ReserveTurn) to become the turn, honouring
  // options (cancellation, progress callbacks).
  virtual Result<std::unique_ptr<TurnHold>> WaitForTurn(
      std::unique_ptr<TurnReservation> reservation, const TurnOptions& options) = 0;
  // The session's state as of now, read by the holder of its turn.
  virtual Result<TurnStart> ReadTurnStart(const std::string& session_id) = 0;
  // Writes `plan` durably (all versions or none; the counter moves from plan.last_issued), with
  // plan.key, the claim of plan.claims_task and the retention prune in the same transaction;
  // returns what the prune removed (the keys of pruned versions go with them). Called only by the
  // holder of the session's turn.
  virtual Result<std::vector<RemovedVersion>> WriteCommit(TurnHold& turn,
                                                          const CommitPlan& plan) = 0;
  // Deletes every version of the session (the counter stays) with their keys and an earlier
  // clear's key, empties the request and result its tasks keep, and records plan.key (when the
  // session has a row); returns the versions.
  virtual Result<std::vector<RemovedVersion>> WriteClear(TurnHold& turn, const ClearPlan& plan) = 0;
  // After a committed commit, clear or expiry: deletes what `removed` left behind (files, local
  // copies, unreferenced blobs) — and, when `whole_session` (a clear or an expiry), whatever else
  // the store keeps for the session. Best effort: the rows are already gone.
  virtual void DeleteRemoved(const std::string& session_id,
                             const std::vector<RemovedVersion>& removed, bool whole_session) = 0;
  // After a commit: anything a store keeps beside the rows (PostgreSQL: local copies).
  virtual void AfterCommit(const CommitPlan& plan) {}
  // The path a version's VersionInfo names.
  virtual std::filesystem::path VersionPath(const std::string& session_id, int64_t version,
                                            const std::string& extension) const = 0;
  // ReadSession's rows, from one snapshot: kNotFound (UnknownSessionError) for an unknown or
  // expired session.
  virtual Result<SessionSnapshot> LoadSession(const std::string& session_id,
                                              std::optional<int64_t> version,
                                              bool include_history) = 0;
  // Makes sure the file at version.path holds the version (PostgreSQL writes its local copy).
  virtual Status Materialize(const VersionInfo& version) { return Status::Ok(); }
  // A version's stored bytes: kNotFound when the version no longer exists, kDataLoss when its
  // row exists but its bytes do not.
  virtual Result<StoredBytes> LoadBytes(const VersionInfo& version) = 0;
  // The version's row still exists (another process or replica may have pruned it).
  virtual Result<bool> VersionExists(const std::string& session_id, int64_t version) = 0;
  // Live sessions by newest activity first, after (updated_ms, session_id) when given.
  struct ListAfter {
    int64_t updated_ms = 0;
    std::string session_id;
  };
  // `principal`'s sessions (session/principal_scope.h).
  virtual Result<std::vector<ListedSession>> ListSessionRows(const std::string& principal,
                                                             const std::optional<ListAfter>& after,
                                                             int limit) = 0;
  virtual Result<bool> SessionIsLive(const std::string& session_id) = 0;
  // The key's row in the session with, for a commit's key, its version (one snapshot); nullopt
  // when there is none, or when its version no longer exists.
  virtual Result<std::optional<AppliedKey>> LoadAppliedKey(const std::string& session_id,
                                                           const std::string& key) = 0;

  // The store's task rows, which the task methods above work over (chain_tasks.h).
  virtual TaskRows& task_rows() = 0;

  // --- For the stores ---------------------------------------------------------------------
  const StoreOptions& options() const { return options_; }
  ImageCache& image_cache() { return cache_; }
  int64_t NowMs() const;
  // Sessions whose last activity is older than this are idle (options().idle_days > 0).
  int64_t IdleCutoffMs() const;
  // After a clear or an expiry has committed: forgets the session's cached bytes and deletes what
  // its versions left behind.
  void ForgetSession(const std::string& session_id, const std::vector<RemovedVersion>& removed);

 private:
  // The turn an edit holds, and the commit path (chain_store.cpp): plan, write, clean up, answer.
  class ChainEditTurn;

  Result<std::string> CheckedBytes(const VersionInfo& version);
  // The task rules over this store's rows, for one call.
  ChainTasks tasks();

  const StoreOptions options_;
  const Clock& clock_;
  ImageCache cache_;
};

}  // namespace imgmcp::session
