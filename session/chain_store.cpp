#include "session/chain_store.h"

#include <chrono>
#include <utility>

#include "common/sha256.h"
#include "session/data_dir.h"
#include "session/idempotency.h"
#include "session/principal_scope.h"
#include "session/version_rules.h"

namespace imgmcp::session {

Result<StoreOptions> ResolveStoreOptions(const StoreOptions& options) {
  if (options.data_dir.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "the session store needs a data directory");
  }
  if (options.max_versions_per_session < 0 || options.idle_days < 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "max_versions_per_session and idle_days must be >= 0");
  }
  StoreOptions resolved = options;
  std::error_code ec;
  resolved.data_dir = std::filesystem::absolute(options.data_dir, ec).lexically_normal();
  if (ec) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "bad data directory " + options.data_dir.string() + ": " + ec.message());
  }
  return resolved;
}

// --- The turn an edit holds ---------------------------------------------------------------------

// Commits and clears through the store's hooks (WriteCommit, WriteClear), holding the turn.
class ChainStore::ChainEditTurn final : public EditTurn {
 public:
  ChainEditTurn(ChainStore* store, std::unique_ptr<TurnHold> hold, std::string session_id,
                TurnStart start)
      : store_(store),
        hold_(std::move(hold)),
        session_id_(std::move(session_id)),
        current_(std::move(start.current)),
        last_issued_(start.last_issued) {}

  std::optional<VersionInfo> Current() const override { return current_; }
  int64_t LastIssuedVersion() const override { return last_issued_; }
  Result<std::vector<VersionInfo>> CommitVersions(
      const std::vector<NewVersion>& versions,
      const std::optional<IdempotencyRecord>& key) override;
  Status Clear(const std::optional<IdempotencyRecord>& key) override;

 private:
  // The commit of `versions` after the last issued number: validated, numbered, hashed.
  Result<CommitPlan> Plan(const std::vector<NewVersion>& versions,
                          const std::optional<IdempotencyRecord>& key) const;
  // What the commit of `plan` answers.
  std::vector<VersionInfo> Committed(const CommitPlan& plan) const;

  ChainStore* const store_;
  const std::unique_ptr<TurnHold> hold_;  // the turn, given back when the edit ends
  const std::string session_id_;
  std::optional<VersionInfo> current_;
  int64_t last_issued_;
};

ChainStore::ChainStore(const StoreOptions& options, const Clock& clock)
    : options_(options), clock_(clock), cache_(options.cache_bytes) {}

ChainStore::~ChainStore() = default;

int64_t ChainStore::NowMs() const { return WallMs(clock_); }

int64_t ChainStore::IdleCutoffMs() const {
  return NowMs() - static_cast<int64_t>(options_.idle_days) * 86'400'000;
}

namespace {

void RecordTurnWait(metrics::Metrics& metrics, std::chrono::steady_clock::time_point since) {
  metrics.RecordTurnWait(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count());
}

void RecordCommit(metrics::Metrics& metrics, const CommitPlan& plan) {
  int64_t bytes = 0;
  for (const CommitPlan::Planned& v : plan.versions) {
    bytes += static_cast<int64_t>(v.source->bytes.size());
  }
  metrics.RecordCommit(static_cast<int64_t>(plan.versions.size()), bytes);
}

}  // namespace

// --- Turns --------------------------------------------------------------------------------------

Result<std::unique_ptr<EditTurn>> ChainStore::AcquireTurn(const std::string& session_id,
                                                          const TurnOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<TurnReservation> reservation, ReserveTurn(session_id));
  return AcquireReservedTurn(std::move(reservation), options);
}

Result<std::unique_ptr<EditTurn>> ChainStore::AcquireReservedTurn(
    std::unique_ptr<TurnReservation> reservation, const TurnOptions& options) {
  if (reservation == nullptr) return MakeError(ErrorCode::kInternal, "no turn reservation");
  const std::string session_id = reservation->session_id();
  const auto waiting_since = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::unique_ptr<TurnHold> hold, WaitForTurn(std::move(reservation), options));
  if (options_.metrics != nullptr) RecordTurnWait(*options_.metrics, waiting_since);
  // Read afresh under the turn: another process or replica may have committed just before it.
  ASSIGN_OR_RETURN(TurnStart start, ReadTurnStart(session_id));
  if (options.cancel.stop_requested()) {
    return MakeError(ErrorCode::kCancelled, "cancelled before the edit started");
  }
  return std::unique_ptr<EditTurn>(
      new ChainEditTurn(this, std::move(hold), session_id, std::move(start)));
}

// --- Commits ------------------------------------------------------------------------------------
//
// A commit, step by step: Plan (validate, number, hash) → WriteCommit (the store writes it
// durably, with the retention prune, all or nothing) → the pruned versions' cached bytes and
// leftovers go (DeleteRemoved) → the new bytes are cached and the store's extras made
// (AfterCommit) → Committed, the answer. A crash between the steps leaves leftovers that a
// store sweeps or ignores, never a torn version.

namespace {

// A key a commit or clear is to record must have the form of one, and a digest.
Status CheckKey(const std::optional<IdempotencyRecord>& key) {
  if (!key.has_value()) return Status::Ok();
  if (!IsValidIdempotencyKey(key->key)) return InvalidIdempotencyKeyError(key->key);
  if (key->digest.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "an idempotency key needs its call's digest");
  }
  return Status::Ok();
}

}  // namespace

Result<CommitPlan> ChainStore::ChainEditTurn::Plan(
    const std::vector<NewVersion>& versions, const std::optional<IdempotencyRecord>& key) const {
  RETURN_IF_ERROR(ValidateNewVersions(versions, last_issued_));
  RETURN_IF_ERROR(CheckKey(key));
  CommitPlan plan;
  plan.session_id = session_id_;
  plan.key = key;
  if (key.has_value()) plan.claims_task = TaskIdOfKey(key->key);
  plan.last_issued = last_issued_;
  plan.now_ms = store_->NowMs();
  plan.created_at =
      FormatRfc3339(std::chrono::system_clock::time_point(std::chrono::milliseconds(plan.now_ms)));
  int64_t number = last_issued_;
  for (const NewVersion& nv : versions) {
    plan.versions.push_back({&nv, ++number, Sha256Hex(nv.bytes)});
  }
  return plan;
}

Result<std::vector<VersionInfo>> ChainStore::ChainEditTurn::CommitVersions(
    const std::vector<NewVersion>& versions, const std::optional<IdempotencyRecord>& key) {
  ASSIGN_OR_RETURN(CommitPlan plan, Plan(versions, key));
  ASSIGN_OR_RETURN(std::vector<RemovedVersion> pruned, store_->WriteCommit(*hold_, plan));
  if (store_->options_.metrics != nullptr) RecordCommit(*store_->options_.metrics, plan);
  ImageCache& cache = store_->cache_;
  for (const RemovedVersion& removed : pruned) cache.Erase(session_id_, removed.version);
  if (!pruned.empty()) store_->DeleteRemoved(session_id_, pruned, /*whole_session=*/false);
  for (const CommitPlan::Planned& v : plan.versions) {
    cache.Put(session_id_, v.number, std::make_shared<const std::string>(v.source->bytes),
              v.sha256);
  }
  store_->AfterCommit(plan);
  std::vector<VersionInfo> committed = Committed(plan);
  current_ = committed.back();
  last_issued_ = committed.back().version;
  return committed;
}

std::vector<VersionInfo> ChainStore::ChainEditTurn::Committed(const CommitPlan& plan) const {
  std::vector<VersionInfo> out;
  for (const CommitPlan::Planned& v : plan.versions) {
    const NewVersion& nv = *v.source;
    VersionInfo info;
    info.session_id = plan.session_id;
    info.version = v.number;
    info.parent = nv.parent;
    info.operation = nv.operation;
    info.prompt = nv.prompt;
    info.mime_type = nv.mime_type;
    info.bytes = static_cast<int64_t>(nv.bytes.size());
    info.sha256 = v.sha256;
    info.path = store_->VersionPath(plan.session_id, v.number, nv.file_extension);
    info.width = nv.width;
    info.height = nv.height;
    info.backend = nv.backend;
    info.model = nv.model;
    info.created_at = plan.created_at;
    info.details = nv.details;
    out.push_back(std::move(info));
  }
  return out;
}

Status ChainStore::ChainEditTurn::Clear(const std::optional<IdempotencyRecord>& key) {
  RETURN_IF_ERROR(CheckKey(key));
  const ClearPlan plan{session_id_, last_issued_, store_->NowMs(), key};
  ASSIGN_OR_RETURN(std::vector<RemovedVersion> removed, store_->WriteClear(*hold_, plan));
  store_->ForgetSession(session_id_, removed);
  current_.reset();
  return Status::Ok();
}

void ChainStore::ForgetSession(const std::string& session_id,
                               const std::vector<RemovedVersion>& removed) {
  cache_.EraseSession(session_id);
  DeleteRemoved(session_id, removed, /*whole_session=*/true);
}

// --- Reads --------------------------------------------------------------------------------------

Result<SessionSnapshot> ChainStore::ReadSession(const std::string& session_id,
                                                std::optional<int64_t> version,
                                                bool include_history) {
  if (!IsValidStoredSessionId(session_id)) return InvalidSessionIdError(session_id);
  ASSIGN_OR_RETURN(SessionSnapshot snapshot, LoadSession(session_id, version, include_history));
  if (snapshot.version.has_value()) {
    if (Status made = Materialize(*snapshot.version); !made.ok()) {
      // Pruned or cleared since the read: the snapshot stands, that version with it.
      if (made.error().code != ErrorCode::kNotFound) return made.error();
    }
  }
  return snapshot;
}

Result<VersionInfo> ChainStore::GetVersion(const std::string& session_id,
                                           std::optional<int64_t> version) {
  ASSIGN_OR_RETURN(SessionSnapshot snapshot, ReadSession(session_id, version, false));
  if (!snapshot.version.has_value()) {
    return NoSuchVersionError(session_id, version, snapshot.last_issued_version);
  }
  return std::move(*snapshot.version);
}

Result<std::string> ChainStore::ReadImage(const VersionInfo& version) {
  const std::string& id = version.session_id;
  if (!IsValidStoredSessionId(id)) return InvalidSessionIdError(id);
  Result<std::string> bytes = CheckedBytes(version);
  if (!bytes.ok() && bytes.error().code == ErrorCode::kNotFound) cache_.Erase(id, version.version);
  return bytes;
}

// Cached bytes were hashed when they were committed or read, so a hit needs no rehash — only a
// look that the version still exists (another process or replica may have pruned or cleared it).
Result<std::string> ChainStore::CheckedBytes(const VersionInfo& version) {
  const std::string& id = version.session_id;
  const std::string missing =
      "session " + id + " has no version " + std::to_string(version.version);
  auto hit = cache_.Get(id, version.version, version.sha256);
  if (options_.metrics != nullptr) options_.metrics->RecordImageCacheLookup(hit != nullptr);
  if (hit != nullptr) {
    ASSIGN_OR_RETURN(bool exists, VersionExists(id, version.version));
    if (!exists) return MakeError(ErrorCode::kNotFound, missing);
    return *hit;
  }
  ASSIGN_OR_RETURN(StoredBytes stored, LoadBytes(version));
  const std::string sha = Sha256Hex(stored.bytes);
  if (sha != stored.recorded_sha256) {
    return MakeError(ErrorCode::kDataLoss, "the image of session " + id + " version " +
                                               std::to_string(version.version) + " is corrupt (" +
                                               stored.where + ": sha256 " + sha + ", recorded " +
                                               stored.recorded_sha256 + ")");
  }
  auto shared = std::make_shared<const std::string>(std::move(stored.bytes));
  cache_.Put(id, version.version, shared, sha);
  return *shared;
}

Result<SessionPage> ChainStore::ListSessions(const std::string& principal,
                                             const std::optional<std::string>& cursor, int limit) {
  if (!IsValidPrincipal(principal)) {
    return MakeError(ErrorCode::kInvalidArgument, "invalid principal");
  }
  limit = ClampPageSize(limit);
  std::optional<ListAfter> after;
  if (cursor.has_value()) {
    after.emplace();
    if (!DecodeSessionCursor(*cursor, &after->updated_ms, &after->session_id)) {
      return MakeError(ErrorCode::kInvalidArgument, "invalid cursor");
    }
  }
  ASSIGN_OR_RETURN(std::vector<ListedSession> rows, ListSessionRows(principal, after, limit + 1));
  SessionPage out;
  const bool more = rows.size() > static_cast<size_t>(limit);
  if (more) rows.resize(static_cast<size_t>(limit));
  for (ListedSession& row : rows) {
    if (!IsValidStoredSessionId(row.session_id)) continue;
    SessionSummary s;
    s.session_id = row.session_id;
    s.current = std::move(row.current);
    s.current_version = s.current.has_value() ? s.current->version : 0;
    s.version_count = row.version_count;
    s.updated_at = FormatRfc3339(
        std::chrono::system_clock::time_point(std::chrono::milliseconds(row.updated_ms)));
    out.sessions.push_back(std::move(s));
  }
  if (more && !rows.empty()) {
    out.next_cursor = EncodeSessionCursor(rows.back().updated_ms, rows.back().session_id);
  }
  return out;
}

bool ChainStore::SessionExists(const std::string& session_id) {
  if (!IsValidStoredSessionId(session_id)) return false;
  Result<bool> live = SessionIsLive(session_id);
  return live.ok() && *live;
}

Result<std::optional<AppliedKey>> ChainStore::FindAppliedKey(const std::string& session_id,
                                                             const std::string& key) {
  if (!IsValidStoredSessionId(session_id)) return InvalidSessionIdError(session_id);
  if (!IsValidIdempotencyKey(key)) return InvalidIdempotencyKeyError(key);
  ASSIGN_OR_RETURN(std::optional<AppliedKey> applied, LoadAppliedKey(session_id, key));
  if (applied.has_value() && applied->version.has_value()) {
    if (Status made = Materialize(*applied->version); !made.ok()) {
      // Pruned or cleared since the read: so is the key.
      if (made.error().code == ErrorCode::kNotFound) return std::optional<AppliedKey>();
      return made.error();
    }
  }
  return applied;
}

// --- Tasks (chain_tasks.h) ----------------------------------------------------------------------

ChainTasks ChainStore::tasks() { return ChainTasks(task_rows(), clock_, *this); }

Result<TaskRecord> ChainStore::CreateTask(const NewTask& task) { return tasks().Create(task); }

Result<std::optional<TaskRecord>> ChainStore::GetTask(const std::string& task_id,
                                                      const std::string& owner) {
  return tasks().Get(task_id, owner);
}

Result<TaskRecord> ChainStore::UpdateTask(const TaskUpdate& update) {
  return tasks().Update(update);
}

Result<TaskPage> ChainStore::ListTasks(const std::string& owner,
                                       const std::optional<std::string>& cursor, int limit) {
  return tasks().List(owner, cursor, limit);
}

Result<int64_t> ChainStore::SweepTasks() { return tasks().Sweep(); }

}  // namespace imgmcp::session
