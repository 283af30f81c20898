// SessionStore: durable, strictly ordered chains of image versions (docs/design.md §3).
//
// The contract the tools rely on, whatever keeps the data (tests/unit/session/store_contract_test
// is the typed suite every implementation passes). Everything here is thread-safe. One session's
// edits run one at a time, in arrival order (a turn); different sessions run in parallel. A
// version is reported only once it is durable; a failed commit commits nothing; version numbers
// are never reused — not after a clear, nor after idle expiry (the counter survives).
//
// Implementations:
//   SqliteSessionStore (sqlite_session_store.h, the embedded default): SQLite metadata + one file
//     per version in a data directory; in-process FIFO + flock per session between processes.
//   PostgresSessionStore (postgres/, --store postgresql://…): rows + image bytes in PostgreSQL,
//     turns shared by every replica on one database.
//
// Session ids are checked again here (IsValidSessionId, session/data_dir.h): an invalid id is
// kInvalidArgument and never reaches a path or a query.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "metrics/metrics.h"
#include "session/audit_log.h"
#include "session/data_dir.h"  // IsValidSessionId
#include "session/spend_ledger.h"
#include "session/task_records.h"

namespace imgmcp::session {

struct VersionInfo {
  std::string session_id;
  int64_t version = 0;
  std::optional<int64_t> parent;  // the version this one was made from, if any
  std::string operation;          // "generate", "edit", "import", "revert"
  std::string prompt;             // exactly as given
  std::string mime_type;
  int64_t bytes = 0;
  std::string sha256;
  // Absolute path of a file holding exactly these bytes: the version's own file (SQLite) or this
  // process's local cache copy (PostgreSQL), present when the version is handed out.
  std::filesystem::path path;
  int width = 0;
  int height = 0;
  std::string backend;  // "gemini" or "local"
  std::string model;
  std::string created_at;  // RFC 3339 UTC
  // Opaque JSON text the tools keep with the version (generation parameters, replay data for
  // conversational edits). The store only carries it: "{}" when nothing was recorded.
  std::string details = "{}";
};

struct SessionSummary {
  std::string session_id;
  int64_t current_version = 0;  // 0 when the session has no images
  std::optional<VersionInfo> current;
  std::string updated_at;
  int64_t version_count = 0;  // versions the session holds (a listing shows it without a manifest)
};

// One session at one moment (ReadSession): the current or a requested version and, when asked,
// the whole history, all from the same database snapshot.
struct SessionSnapshot {
  std::optional<VersionInfo> version;  // nullopt: no images, or the requested one does not exist
  std::vector<VersionInfo> history;    // oldest first; filled only when asked for
  int64_t last_issued_version = 0;     // highest number ever issued (cleared/pruned ones too)
  // What the session's calls were charged (the spend ledger), reverted and cleared versions
  // included.
  double cost_usd = 0;
};

struct SessionPage {
  std::vector<SessionSummary> sessions;  // newest activity first
  std::optional<std::string> next_cursor;
};

// What a commit writes. bytes are stored exactly as given (no re-encoding).
struct NewVersion {
  std::string bytes;
  std::string mime_type;
  std::string file_extension;  // ".png", ".jpg", …
  int width = 0;
  int height = 0;
  std::string operation;
  std::string prompt;
  std::optional<int64_t> parent;
  std::string backend;
  std::string model;
  std::string details = "{}";  // opaque JSON text, stored and returned as given (VersionInfo)
};

// An idempotency key as a commit or a clear records it, in the same transaction (docs/design.md
// §3, "Exactly-once writes"). The store checks the key's form (IsValidIdempotencyKey,
// session/idempotency.h) and keeps it, with the digest, for as long as the version it made
// exists; a clear's key until the session is cleared again or expires.
struct IdempotencyRecord {
  std::string key;
  std::string digest;  // what the caller compares on a repeat (the call's arguments, hashed)
};

// A key found applied to a session (SessionStore::FindAppliedKey): what the recorded call did.
struct AppliedKey {
  std::string digest;
  std::optional<VersionInfo> version;   // a commit: its (last) version, which still exists
  std::optional<int64_t> cleared_next;  // a clear: the number the next version was to get
};

struct StoreOptions {
  std::filesystem::path data_dir;
  int max_versions_per_session = 100;   // older versions beyond this are pruned (0 = keep all)
  int idle_days = 0;                    // sessions idle longer are expired at open (0 = never)
  size_t cache_bytes = 64u << 20;       // in-memory cache of recent image bytes
  metrics::Metrics* metrics = nullptr;  // turn waits and commits are counted here (may be null)
};

struct TurnOptions {
  std::stop_token cancel;                    // leaving the queue on cancellation
  std::function<void(int ahead)> on_queued;  // called when waiting, with edits ahead
  // Called once when, after this process's line, the session is held by another process (its
  // edits cannot be counted): the wait for that process's turn begins.
  std::function<void()> on_other_process;
  // on_queued runs on the waiting thread, outside any store lock: once as soon as the edit has to
  // wait (ahead >= 1) and again whenever the number ahead changes. A stop of `cancel` wakes the
  // wait at once, queued or waiting for another process or replica; it returns kCancelled.
};

// Exclusive, ordered access to one session for the duration of an edit. Destroying it releases the
// turn (in-process and cross-process). Not thread-safe itself: one edit owns it. It must not
// outlive the store that issued it.
class EditTurn {
 public:
  virtual ~EditTurn() = default;
  // The session's current version as of the start of the turn (and after each Commit).
  virtual std::optional<VersionInfo> Current() const = 0;
  // The highest version number ever issued in this session (also counts cleared ones).
  virtual int64_t LastIssuedVersion() const = 0;
  // Commits `versions` as LastIssued+1, +2, … all together or not at all (one transaction): an
  // import and the edit made from it, say. A version's `parent` may name an earlier one of the
  // same list. Any invalid version (no bytes, bad extension, a parent that is not an earlier
  // version, …) is kInvalidArgument and nothing is committed; so is an empty list.
  // With `key`, the key is recorded in the same transaction, naming the last version; a key
  // already recorded in the session, or one of the wrong form, is kInvalidArgument and nothing is
  // committed.
  virtual Result<std::vector<VersionInfo>> CommitVersions(
      const std::vector<NewVersion>& versions, const std::optional<IdempotencyRecord>& key) = 0;
  Result<std::vector<VersionInfo>> CommitVersions(const std::vector<NewVersion>& versions) {
    return CommitVersions(versions, std::nullopt);
  }
  // One version: CommitVersions({version}, key).
  Result<VersionInfo> Commit(const NewVersion& version,
                             const std::optional<IdempotencyRecord>& key = std::nullopt) {
    ASSIGN_OR_RETURN(std::vector<VersionInfo> committed, CommitVersions({version}, key));
    return std::move(committed.front());
  }
  // Clears the session's images (reset); the counter keeps counting. The keys of the deleted
  // versions go with them, and so does an earlier clear's key; `key`, when given, is recorded
  // with this clear (the session must exist: a clear of a session without a row records no key).
  virtual Status Clear(const std::optional<IdempotencyRecord>& key) = 0;
  Status Clear() { return Clear(std::nullopt); }
};

// A place in one session's FIFO line, drawn when a call arrives (ReserveTurn) so that the order
// of turns is the order of arrival, whatever order worker threads later start in. Destroying it
// gives the place up.
class TurnReservation {
 public:
  virtual ~TurnReservation() = default;
  virtual const std::string& session_id() const = 0;
};

// A change to a session made through another store on the same data — another replica — that this
// store learnt of (PostgreSQL announces every commit and clear to every replica).
struct StoreChange {
  std::string session_id;
  int64_t version = 0;       // the newest version committed; 0 for a clear
  bool new_session = false;  // the commit created the session
};
using ChangeListener = std::function<void(const StoreChange& change)>;

// A task created or changed through another store on the same data — another replica — that this
// store learnt of (PostgreSQL announces every task row written), or changed through this store
// while another store runs it (a cancel or the settling of a dead runner's task: its runner's
// callers do not know of it). A listener reads the row (GetTask with the owner given).
struct TaskChange {
  std::string task_id;
  TaskStatus status = TaskStatus::kWorking;  // the status the row was written with
  std::string owner;                         // the row's owner (TaskRecord::owner)
};
using TaskListener = std::function<void(const TaskChange& change)>;

class SessionStore {
 public:
  virtual ~SessionStore() = default;

  // Reports changes made by other replicas, on a store thread, one at a time; nullptr stops the
  // reports (and waits for one in progress). Changes made through this store are not reported:
  // its callers know them. Stores that cannot learn of others' changes (SQLite) never call it.
  // NOLINTNEXTLINE(performance-unnecessary-value-param): an override keeps (moves) it
  virtual void SetChangeListener(ChangeListener listener) {}
  // The same for tasks: reports task rows written by other replicas (created, updated, settled)
  // and rows of other replicas' tasks written through this store (TaskChange), on a store thread,
  // one at a time; nullptr stops the reports (and waits for one in progress). A row a store's own
  // runner writes is not reported to that store. Never called by SQLite.
  // NOLINTNEXTLINE(performance-unnecessary-value-param): an override keeps (moves) it
  virtual void SetTaskListener(TaskListener listener) {}

  // Draws a place in `session_id`'s line now; never blocks. kInvalidArgument for a bad id.
  virtual Result<std::unique_ptr<TurnReservation>> ReserveTurn(const std::string& session_id) = 0;
  // Waits for the reserved place's turn (see AcquireTurn). The reservation must come from this
  // store.
  virtual Result<std::unique_ptr<EditTurn>> AcquireReservedTurn(
      std::unique_ptr<TurnReservation> reservation, const TurnOptions& options) = 0;

  // ReserveTurn + AcquireReservedTurn: waits for this session's turn (FIFO in arrival order),
  // honouring cancellation. A new (or expired) session is created by the turn's first commit;
  // a turn that commits nothing leaves no session behind.
  virtual Result<std::unique_ptr<EditTurn>> AcquireTurn(const std::string& session_id,
                                                        const TurnOptions& options) = 0;

  // Reads without taking a turn. version nullopt = current. kNotFound for unknown session/version.
  virtual Result<VersionInfo> GetVersion(const std::string& session_id,
                                         std::optional<int64_t> version) = 0;
  // Checks sha256. kNotFound when the version no longer exists (cleared/pruned); kDataLoss when
  // its row exists but the file is missing or its bytes do not match the recorded sha256.
  virtual Result<std::string> ReadImage(const VersionInfo& version) = 0;
  // Oldest first. kNotFound for an unknown session; empty for a session without images.
  // (ReadSession's history.)
  Result<std::vector<VersionInfo>> History(const std::string& session_id) {
    ASSIGN_OR_RETURN(SessionSnapshot snapshot, ReadSession(session_id, std::nullopt, true));
    return std::move(snapshot.history);
  }
  // GetVersion (+ History when include_history) in one read transaction, so a commit by another
  // thread or process lands either wholly before or wholly after it. kNotFound only for an
  // unknown session; a missing version is SessionSnapshot::version == nullopt.
  virtual Result<SessionSnapshot> ReadSession(const std::string& session_id,
                                              std::optional<int64_t> version,
                                              bool include_history) = 0;
  // `principal`'s sessions (principal_scope.h; "" the local principal's) by newest activity
  // (commit, clear, creation) first, by their stored ids; limit <= 0 means 100, capped at 1000. A
  // cursor not produced by this function is kInvalidArgument, and so is an invalid principal.
  // Sessions without images are listed too (current_version 0).
  virtual Result<SessionPage> ListSessions(const std::string& principal,
                                           const std::optional<std::string>& cursor, int limit) = 0;
  // The local principal's sessions.
  Result<SessionPage> ListSessions(const std::optional<std::string>& cursor, int limit) {
    return ListSessions(std::string(), cursor, limit);
  }
  virtual bool SessionExists(const std::string& session_id) = 0;
  // The idempotency key `key` as recorded in `session_id` by a commit whose version still exists
  // or by its last clear; nullopt when there is none (an unknown session too). Read without a
  // turn, so it is final only while holding the session's turn. kInvalidArgument for a bad id or
  // key.
  virtual Result<std::optional<AppliedKey>> FindAppliedKey(const std::string& session_id,
                                                           const std::string& key) = 0;

  // --- Tasks (task_records.h) ------------------------------------------------------------------
  // A store that keeps no tasks answers kUnsupported to all of these.

  // Creates a working task owned by `task.owner`, run by this store's process (TaskRecord::runner),
  // with a fresh 128-bit id; durable when it returns. kInvalidArgument for a bad session id.
  virtual Result<TaskRecord> CreateTask(const NewTask& /*task*/) {
    return Error(ErrorCode::kUnsupported, "this session store keeps no tasks");
  }
  // The task, if it exists, has not expired and belongs to `owner`; nullopt otherwise (another
  // owner's task is indistinguishable from an unknown one). A working or input_required task
  // whose runner is gone (its process or replica died) is settled first: completed from the
  // version its key committed, else failed saying its runner stopped.
  virtual Result<std::optional<TaskRecord>> GetTask(const std::string& /*task_id*/,
                                                    const std::string& /*owner*/) {
    return Error(ErrorCode::kUnsupported, "this session store keeps no tasks");
  }
  // Applies `update` to a task that is not terminal and returns the new row. kNotFound when the
  // task is unknown, expired or not the owner's; kFailedPrecondition (naming the status) when it
  // is already terminal; kConflict (naming the version) for an update `unless_committed` of a
  // task whose commit has claimed its row; kInvalidArgument for an update that makes no sense
  // (completed without a result, failed without an error). A commit with the task's key
  // (TaskIdempotencyKey) claims the row in its own transaction, and is refused (kCancelled,
  // nothing committed) when the task already ended: a commit and a cancel are decided once.
  virtual Result<TaskRecord> UpdateTask(const TaskUpdate& /*update*/) {
    return Error(ErrorCode::kUnsupported, "this session store keeps no tasks");
  }
  // The owner's tasks, newest first; limit <= 0 means 100, capped at 1000. A cursor not made by
  // this function is kInvalidArgument.
  virtual Result<TaskPage> ListTasks(const std::string& /*owner*/,
                                     const std::optional<std::string>& /*cursor*/, int /*limit*/) {
    return Error(ErrorCode::kUnsupported, "this session store keeps no tasks");
  }
  // Removes terminal tasks older than their ttl and settles orphaned ones (see GetTask); never
  // touches a version. Returns how many rows were removed.
  virtual Result<int64_t> SweepTasks() {
    return Error(ErrorCode::kUnsupported, "this session store keeps no tasks");
  }

  // --- The spend ledger (spend_ledger.h) -------------------------------------------------------
  // A store that keeps no ledger answers kUnsupported to all of these.

  // Checks `hold` against `budgets` beside the charges and live holds already kept, and keeps it,
  // in one transaction serialised against every other hold on the store (every process and
  // replica). Returns the hold's id. kResourceExhausted (CheckSpendBudgets, spend_rules.h) when it
  // would cross a budget: nothing is kept. kInvalidArgument for a hold ValidateSpendHold refuses.
  virtual Result<int64_t> ReserveSpend(const SpendHold& /*hold*/, const SpendBudgets& /*budgets*/) {
    return Error(ErrorCode::kUnsupported, "this session store keeps no spend ledger");
  }
  // Turns hold `id` into a charge of what the call cost (expired or not). kNotFound when there is
  // no such hold (released, or settled already).
  virtual Status SettleSpend(int64_t /*id*/, const SpendCharge& /*charge*/) {
    return Error(ErrorCode::kUnsupported, "this session store keeps no spend ledger");
  }
  // Moves hold `id`'s expiry to `expires_ms`: its call got its session's turn after waiting, and
  // its backend call starts now. A hold already gone is not an error.
  virtual Status RenewSpendHold(int64_t /*id*/, int64_t /*expires_ms*/) {
    return Error(ErrorCode::kUnsupported, "this session store keeps no spend ledger");
  }
  // Drops hold `id`: its call was not paid for. A hold already gone is not an error.
  virtual Status ReleaseSpend(int64_t /*id*/) {
    return Error(ErrorCode::kUnsupported, "this session store keeps no spend ledger");
  }
  // What `hold` would be checked against now: the charges and live holds of its UTC day and of
  // its session.
  virtual Result<SpendTotals> SpendTotalsFor(const SpendHold& /*hold*/) {
    return Error(ErrorCode::kUnsupported, "this session store keeps no spend ledger");
  }

  // --- Calls per person (the per-person rate limit) -------------------------------------------
  // Counts one call of `principal` in the window that starts at `window_ms` and returns how many
  // calls the window holds with it, counted by every process and replica on the store in one
  // row; windows that started before `forget_before_ms` are dropped. kInvalidArgument for an
  // invalid principal.
  virtual Result<int64_t> CountCall(const std::string& /*principal*/, int64_t /*window_ms*/,
                                    int64_t /*forget_before_ms*/) {
    return Error(ErrorCode::kUnsupported, "this session store keeps no call counts");
  }

  // --- Keys the processes on one store share ---------------------------------------------------
  // The key kept under `name`; when there is none yet, `candidate` is kept and returned. Every
  // process and replica on the store gets the same key (the first one kept wins).
  virtual Result<std::string> SharedKey(const std::string& /*name*/,
                                        const std::string& /*candidate*/) {
    return Error(ErrorCode::kUnsupported, "this session store keeps no shared keys");
  }

  // --- The audit trail (audit_log.h) -----------------------------------------------------------
  // Adds `event`, durable when this returns.
  virtual Status RecordAudit(const AuditEvent& /*event*/) {
    return Error(ErrorCode::kUnsupported, "this session store keeps no audit trail");
  }
  // The events `query` asks for, oldest first.
  virtual Result<std::vector<AuditEvent>> ReadAudit(const AuditQuery& /*query*/) {
    return Error(ErrorCode::kUnsupported, "this session store keeps no audit trail");
  }
  // Removes the events before `before_ms`; how many.
  virtual Result<int64_t> ForgetAudit(int64_t /*before_ms*/) {
    return Error(ErrorCode::kUnsupported, "this session store keeps no audit trail");
  }
};

}  // namespace imgmcp::session
