#include "session/postgres/postgres_session_store.h"

#include <sys/stat.h>

#include <chrono>
#include <set>
#include <sstream>

#include "common/log.h"
#include "common/random.h"
#include "common/sha256.h"
#include "session/data_dir.h"
#include "session/file_io.h"
#include "session/postgres/pg_schema.h"
#include "session/version_rules.h"

namespace imgmcp::session::postgres {
namespace {

constexpr char kLog[] = "postgres";
constexpr char kCacheTempPrefix[] = ".tmp-";

// The version columns every read selects (aliased v), in VersionFromRow's order.
constexpr const char* kVersionColumns =
    "v.version, v.parent, v.operation, v.prompt, v.mime_type, v.bytes, v.sha256, "
    "v.file_extension, v.width, v.height, v.backend, v.model, v.created_at, v.details";

bool IsRetryableLoss(const Error& e) { return e.code == ErrorCode::kUnavailable; }

std::string DigestArray(const std::vector<std::string>& digests) {
  std::string out = "{";
  for (size_t i = 0; i < digests.size(); ++i) {
    if (i > 0) out += ",";
    out += digests[i];  // hex: nothing to quote
  }
  return out + "}";
}

}  // namespace

bool IsPostgresUrl(const std::string& store) {
  return store.rfind("postgresql://", 0) == 0 || store.rfind("postgres://", 0) == 0;
}

// ---------------------------------------------------------------------------------------------
// EditTurn

class PgEditTurn final : public EditTurn {
 public:
  PgEditTurn(PostgresSessionStore* store, PgTurns::HeldTurn held,
             std::optional<VersionInfo> current, int64_t last_issued)
      : store_(store),
        held_(std::move(held)),
        current_(std::move(current)),
        last_issued_(last_issued) {}

  std::optional<VersionInfo> Current() const override { return current_; }
  int64_t LastIssuedVersion() const override { return last_issued_; }

  Result<std::vector<VersionInfo>> CommitVersions(
      const std::vector<NewVersion>& versions) override {
    Result<std::vector<VersionInfo>> committed =
        store_->CommitInTurn(held_.ticket(), last_issued_, versions);
    if (committed.ok()) {
      current_ = committed->back();
      last_issued_ = committed->back().version;
    }
    return committed;
  }

  Status Clear() override {
    Status st = store_->ClearInTurn(held_.ticket());
    if (st.ok()) current_.reset();
    return st;
  }

 private:
  PostgresSessionStore* store_;
  PgTurns::HeldTurn held_;  // gives the turn back when the edit ends
  std::optional<VersionInfo> current_;
  int64_t last_issued_;
};

// ---------------------------------------------------------------------------------------------
// Open

PostgresSessionStore::PostgresSessionStore(const StoreOptions& options,
                                           const PostgresStoreOptions& pg, std::string label,
                                           const Clock& clock)
    : options_(options),
      clock_(clock),
      origin_(RandomHex(8)),
      pool_(pg.url, std::move(label), pg.pool_size),
      cache_(options.cache_bytes) {}

PostgresSessionStore::~PostgresSessionStore() {
  turns_.reset();  // stops the listener (and its callbacks) first
}

int64_t PostgresSessionStore::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch())
      .count();
}

Result<std::unique_ptr<PostgresSessionStore>> PostgresSessionStore::Open(
    const StoreOptions& options, const PostgresStoreOptions& pg, const Clock& clock) {
  if (options.data_dir.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the PostgreSQL session store needs a data directory for its local cache");
  }
  if (options.max_versions_per_session < 0 || options.idle_days < 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "max_versions_per_session and idle_days must be >= 0");
  }
  if (pg.pool_size < 1) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the connection pool needs at least 1 connection");
  }
  ASSIGN_OR_RETURN(std::string label, DescribeConninfo(pg.url));
  StoreOptions resolved = options;
  std::error_code ec;
  resolved.data_dir = std::filesystem::absolute(options.data_dir, ec).lexically_normal();
  if (ec) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "bad data directory " + options.data_dir.string() + ": " + ec.message());
  }
  std::unique_ptr<PostgresSessionStore> store(new PostgresSessionStore(resolved, pg, label, clock));
  RETURN_IF_ERROR(store->Initialize());
  return store;
}

Status PostgresSessionStore::Initialize() {
  std::string store_id;
  {
    ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
    ASSIGN_OR_RETURN(std::string id, MigratePgSchema(*conn));
    store_id = id;
  }
  if (store_id.empty() || store_id.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return MakeError(ErrorCode::kDataLoss, "the PostgreSQL database at " + pool_.label() +
                                               " has an invalid imgmcp store id");
  }
  cache_dir_ = options_.data_dir / "pg-cache" / store_id;
  RETURN_IF_ERROR(EnsureDir(cache_dir_));
  ASSIGN_OR_RETURN(
      std::unique_ptr<PgTurns> turns,
      PgTurns::Start(pool_, [this](const std::string& payload) { OnCommitNotification(payload); }));
  turns_ = std::move(turns);
  if (options_.idle_days > 0) {
    RETURN_IF_ERROR(ExpireIdleSessions());
  }
  return Status::Ok();
}

// Expires sessions idle for more than idle_days (and not in anybody's line right now): their
// versions go, the row stays (expired) so the counter survives.
Status PostgresSessionStore::ExpireIdleSessions() {
  const int64_t cutoff = NowMs() - static_cast<int64_t>(options_.idle_days) * 86'400'000;
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  ASSIGN_OR_RETURN(
      PgResult r,
      conn->Exec(
          "WITH idle AS (UPDATE imgmcp.sessions s SET expired = true WHERE NOT s.expired AND "
          "s.updated_ms < $1 AND NOT EXISTS (SELECT 1 FROM imgmcp.turn_tickets t WHERE "
          "t.session_id = s.session_id) RETURNING session_id), "
          "gone AS (DELETE FROM imgmcp.versions v USING idle WHERE v.session_id = idle.session_id "
          "RETURNING v.sha256) "
          "SELECT DISTINCT sha256 FROM gone",
          {PgParam::Int(cutoff)}, "expiring idle sessions"));
  std::vector<std::string> digests;
  for (int i = 0; i < r.Rows(); ++i) digests.push_back(r.Text(i, 0));
  if (!digests.empty()) {
    log::Info(kLog, "expired idle sessions (" + std::to_string(digests.size()) + " image(s))");
  }
  CollectBlobs(digests);
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Notifications from other replicas

void PostgresSessionStore::SetChangeListener(ChangeListener listener) {
  std::lock_guard lock(listener_mu_);
  listener_ = std::move(listener);
}

// Payload: "<origin> <session_id> <version> <new: 0|1>" (version 0: a clear).
void PostgresSessionStore::OnCommitNotification(const std::string& payload) {
  std::istringstream in(payload);
  std::string origin;
  StoreChange change;
  int new_session = 0;
  if (!(in >> origin >> change.session_id >> change.version >> new_session)) {
    log::Warn(kLog, "ignoring a malformed imgmcp_commits notification");
    return;
  }
  if (origin == origin_ || !IsValidSessionId(change.session_id)) return;
  change.new_session = new_session != 0;
  if (change.version == 0) {
    cache_.EraseSession(change.session_id);
  }
  std::lock_guard lock(listener_mu_);
  if (listener_) listener_(change);
}

// ---------------------------------------------------------------------------------------------
// Turns

Result<std::unique_ptr<TurnReservation>> PostgresSessionStore::ReserveTurn(
    const std::string& session_id) {
  if (!IsValidSessionId(session_id)) return InvalidSessionIdError(session_id);
  return turns_->Reserve(session_id);
}

Result<std::unique_ptr<EditTurn>> PostgresSessionStore::AcquireTurn(const std::string& session_id,
                                                                    const TurnOptions& options) {
  auto reservation = ReserveTurn(session_id);
  if (!reservation.ok()) return reservation.error();
  return AcquireReservedTurn(std::move(*reservation), options);
}

namespace {

// A version row (kVersionColumns starting at `col`), or nullopt when its columns are NULL (no
// version: LEFT JOIN).
std::optional<VersionInfo> VersionFromRow(const PgResult& r, int row, int col,
                                          const std::string& session_id) {
  if (r.IsNull(row, col)) return std::nullopt;
  VersionInfo v;
  v.session_id = session_id;
  v.version = r.Int(row, col);
  v.parent = r.OptionalInt(row, col + 1);
  v.operation = r.Text(row, col + 2);
  v.prompt = r.Text(row, col + 3);
  v.mime_type = r.Text(row, col + 4);
  v.bytes = r.Int(row, col + 5);
  v.sha256 = r.Text(row, col + 6);
  v.path = r.Text(row, col + 7);  // the extension, until the caller makes it a path
  v.width = static_cast<int>(r.Int(row, col + 8));
  v.height = static_cast<int>(r.Int(row, col + 9));
  v.backend = r.Text(row, col + 10);
  v.model = r.Text(row, col + 11);
  v.created_at = r.Text(row, col + 12);
  v.details = r.Text(row, col + 13);
  return v;
}

}  // namespace

std::filesystem::path PostgresSessionStore::LocalPath(const std::string& session_id,
                                                      int64_t version,
                                                      const std::string& extension) const {
  return cache_dir_ / session_id / DataDirLayout::VersionFileName(version, extension);
}

Result<std::unique_ptr<EditTurn>> PostgresSessionStore::AcquireReservedTurn(
    std::unique_ptr<TurnReservation> reservation, const TurnOptions& options) {
  if (reservation == nullptr) return MakeError(ErrorCode::kInternal, "no turn reservation");
  const std::string session_id = reservation->session_id();
  ASSIGN_OR_RETURN(PgTurns::HeldTurn held, turns_->Wait(std::move(reservation), options));
  // The state as of now: another replica may have committed just before our turn.
  struct State {
    int64_t last_issued = 0;
    std::optional<VersionInfo> current;
  };
  ASSIGN_OR_RETURN(
      State state, WithReadConnection<State>([&](PgConnection& conn) -> Result<State> {
        Result<PgResult> r = conn.Exec(
            std::string("SELECT s.last_version, ") + kVersionColumns +
                " FROM imgmcp.sessions s LEFT JOIN LATERAL (SELECT * FROM imgmcp.versions WHERE "
                "session_id = s.session_id ORDER BY version DESC LIMIT 1) v ON NOT s.expired "
                "WHERE s.session_id = $1",
            {PgParam::Text(session_id)}, "reading the session at the start of its turn");
        if (!r.ok()) return r.error();
        State out;
        if (r->Rows() == 1) {
          out.last_issued = r->Int(0, 0);
          out.current = VersionFromRow(*r, 0, 1, session_id);
          if (out.current) {
            out.current->path = LocalPath(session_id, out.current->version, out.current->path);
          }
        }
        return out;
      }));
  if (options.cancel.stop_requested()) {
    return MakeError(ErrorCode::kCancelled, "cancelled before the edit started");
  }
  return std::unique_ptr<EditTurn>(
      new PgEditTurn(this, std::move(held), std::move(state.current), state.last_issued));
}

// ---------------------------------------------------------------------------------------------
// Commits

// A commit, step by step: PlanCommit (validate, number, hash) → in one transaction WriteRows
// (turn check, counter compare-and-set, blobs, version rows, retention prune, NOTIFY) and COMMIT
// (when the connection breaks during it, CheckOutcome looks the outcome up) → after it,
// ForgetPruned (blobs, caches and local copies of pruned versions), CacheCommitted (memory cache,
// local copies) → CommittedVersions (the result).
struct PostgresSessionStore::CommitPlan {
  struct Planned {
    const NewVersion* source;
    int64_t number;
    std::string sha256;
  };
  PgTicket ticket;
  int64_t last_issued = 0;
  int64_t now_ms = 0;
  std::string created_at;
  std::vector<Planned> versions;
};

Result<PostgresSessionStore::CommitPlan> PostgresSessionStore::PlanCommit(
    const PgTicket& ticket, int64_t last_issued, const std::vector<NewVersion>& versions) {
  RETURN_IF_ERROR(ValidateNewVersions(versions, last_issued));
  CommitPlan plan;
  plan.ticket = ticket;
  plan.last_issued = last_issued;
  plan.now_ms = NowMs();
  plan.created_at = FormatRfc3339(clock_.WallNow());
  int64_t number = last_issued;
  for (const NewVersion& nv : versions) {
    plan.versions.push_back({&nv, ++number, Sha256Hex(nv.bytes)});
  }
  return plan;
}

namespace {

// The turn's ticket still exists (and stays, FOR SHARE, until this transaction ends): a replica
// whose place was released as a dead one's never commits over the next turn.
Status CheckTicket(PgConnection& conn, const PgTicket& ticket) {
  ASSIGN_OR_RETURN(
      PgResult r,
      conn.Exec("SELECT 1 FROM imgmcp.turn_tickets WHERE session_id = $1 AND ticket = $2 AND "
                "replica_id = $3 FOR SHARE",
                {PgParam::Text(ticket.session_id), PgParam::Int(ticket.ticket),
                 PgParam::Int(ticket.replica_id)},
                "checking the turn"));
  if (r.Rows() == 0) {
    return MakeError(ErrorCode::kUnavailable,
                     "lost the turn on session " + ticket.session_id +
                         ": this replica's connection to PostgreSQL was lost and its place went "
                         "to the next edit; nothing was committed");
  }
  return Status::Ok();
}

}  // namespace

Status PostgresSessionStore::WriteRows(PgConnection& conn, const CommitPlan& plan,
                                       std::vector<std::pair<int64_t, std::string>>* pruned) {
  const std::string& id = plan.ticket.session_id;
  RETURN_IF_ERROR(CheckTicket(conn, plan.ticket));
  // The counter moves from the number this turn started with, or not at all.
  ASSIGN_OR_RETURN(
      PgResult cas,
      conn.Exec(
          "INSERT INTO imgmcp.sessions AS s (session_id, last_version, created_ms, updated_ms) "
          "VALUES ($1, $2, $3, $3) ON CONFLICT (session_id) DO UPDATE SET last_version = $2, "
          "updated_ms = $3, expired = false WHERE s.last_version = $4 RETURNING 1",
          {PgParam::Text(id), PgParam::Int(plan.versions.back().number), PgParam::Int(plan.now_ms),
           PgParam::Int(plan.last_issued)},
          "advancing the version counter"));
  if (cas.Rows() != 1) {
    return MakeError(ErrorCode::kConflict, "session " + id +
                                               " changed outside this edit's turn (version " +
                                               std::to_string(plan.last_issued) +
                                               " is no longer the newest); nothing was committed");
  }
  for (const CommitPlan::Planned& v : plan.versions) {
    const NewVersion& nv = *v.source;
    // A blob that exists is locked against deletion (by a prune elsewhere) until we commit; one
    // that does not is written.
    ASSIGN_OR_RETURN(PgResult have,
                     conn.Exec("SELECT 1 FROM imgmcp.blobs WHERE sha256 = $1 FOR KEY SHARE",
                               {PgParam::Text(v.sha256)}, "looking up an image's bytes"));
    if (have.Rows() == 0) {
      RETURN_IF_ERROR(
          conn.Exec("INSERT INTO imgmcp.blobs(sha256, size, bytes) VALUES ($1, $2, $3) "
                    "ON CONFLICT (sha256) DO NOTHING",
                    {PgParam::Text(v.sha256), PgParam::Int(static_cast<int64_t>(nv.bytes.size())),
                     PgParam::Bytes(nv.bytes)},
                    "storing an image's bytes"));
    }
    RETURN_IF_ERROR(conn.Exec(
        "INSERT INTO imgmcp.versions(session_id, version, parent, operation, prompt, mime_type, "
        "bytes, sha256, file_extension, width, height, backend, model, created_at, details) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
        {PgParam::Text(id), PgParam::Int(v.number), PgParam::OptionalInt(nv.parent),
         PgParam::Text(nv.operation), PgParam::Text(nv.prompt), PgParam::Text(nv.mime_type),
         PgParam::Int(static_cast<int64_t>(nv.bytes.size())), PgParam::Text(v.sha256),
         PgParam::Text(nv.file_extension), PgParam::Int(nv.width), PgParam::Int(nv.height),
         PgParam::Text(nv.backend), PgParam::Text(nv.model), PgParam::Text(plan.created_at),
         PgParam::Text(nv.details)},
        "storing a version"));
  }
  if (options_.max_versions_per_session > 0) {
    ASSIGN_OR_RETURN(
        PgResult old,
        conn.Exec(
            "DELETE FROM imgmcp.versions WHERE session_id = $1 AND version <= (SELECT version FROM "
            "imgmcp.versions WHERE session_id = $1 ORDER BY version DESC OFFSET $2 LIMIT 1) "
            "RETURNING version, sha256",
            {PgParam::Text(id), PgParam::Int(options_.max_versions_per_session)},
            "pruning old versions"));
    for (int i = 0; i < old.Rows(); ++i) pruned->emplace_back(old.Int(i, 0), old.Text(i, 1));
  }
  const bool new_session = plan.last_issued == 0;
  RETURN_IF_ERROR(conn.Exec(
      "SELECT pg_notify('imgmcp_commits', $1)",
      {PgParam::Text(origin_ + " " + id + " " + std::to_string(plan.versions.back().number) +
                     (new_session ? " 1" : " 0"))},
      "announcing the commit"));
  return Status::Ok();
}

Status PostgresSessionStore::CheckOutcome(const CommitPlan& plan, const Error& commit_error) {
  // The connection broke during COMMIT: the transaction may have committed or not. Look.
  const CommitPlan::Planned& last = plan.versions.back();
  const std::string unknown = commit_error.message + "; whether version " +
                              std::to_string(last.number) + " of session " +
                              plan.ticket.session_id + " was committed is not known";
  Result<PgPool::Lease> fresh = pool_.Acquire();
  if (!fresh.ok()) {
    return MakeError(ErrorCode::kUnavailable,
                     unknown + " until PostgreSQL is back (get_image will show it)");
  }
  Result<PgResult> r =
      (*fresh)->Exec("SELECT sha256 FROM imgmcp.versions WHERE session_id = $1 AND version = $2",
                     {PgParam::Text(plan.ticket.session_id), PgParam::Int(last.number)},
                     "checking whether a commit happened");
  if (!r.ok()) return MakeError(ErrorCode::kUnavailable, unknown);
  if (r->Rows() == 1 && r->Text(0, 0) == last.sha256) return Status::Ok();
  return MakeError(commit_error.code, commit_error.message + "; nothing was committed");
}

Result<std::vector<VersionInfo>> PostgresSessionStore::CommitInTurn(
    const PgTicket& ticket, int64_t last_issued, const std::vector<NewVersion>& versions) {
  ASSIGN_OR_RETURN(CommitPlan plan, PlanCommit(ticket, last_issued, versions));
  std::vector<std::pair<int64_t, std::string>> pruned;
  std::optional<Error> commit_error;  // COMMIT broke off: its outcome must be looked up
  {
    ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
    RETURN_IF_ERROR(conn->Run("BEGIN", "starting a commit"));
    Status written = WriteRows(*conn, plan, &pruned);
    if (!written.ok()) {
      if (!conn->Broken()) (void)(conn)->Run("ROLLBACK", "rolling back a failed commit");
      return written.error();
    }
    Status committed = conn->Run("COMMIT", "committing");
    if (!committed.ok()) {
      if (!conn->Broken()) return committed.error();  // refused: nothing was committed
      commit_error = committed.error();
    }
  }  // the connection goes back (or, broken, away) before another is taken
  if (commit_error.has_value()) {
    RETURN_IF_ERROR(CheckOutcome(plan, *commit_error));
  }
  ForgetPruned(ticket.session_id, pruned);
  CacheCommitted(plan);
  return CommittedVersions(plan);
}

void PostgresSessionStore::ForgetPruned(
    const std::string& session_id, const std::vector<std::pair<int64_t, std::string>>& pruned) {
  if (pruned.empty()) return;
  std::vector<std::string> digests;
  for (const auto& [version, sha] : pruned) {
    cache_.Erase(session_id, version);
    digests.push_back(sha);
    // Local copies of any extension (the row is gone, so try the ones we write).
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(cache_dir_ / session_id, ec)) {
      const std::string name = entry.path().filename().string();
      const std::string prefix = "v" + std::to_string(version) + ".";
      if (name.rfind(prefix, 0) == 0) RemoveFileQuietly(entry.path());
    }
  }
  CollectBlobs(digests);
}

void PostgresSessionStore::CacheCommitted(const CommitPlan& plan) {
  const std::filesystem::path dir = cache_dir_ / plan.ticket.session_id;
  if (Status st = EnsureDir(dir); !st.ok()) log::Warn(kLog, st.error().message);
  for (const CommitPlan::Planned& v : plan.versions) {
    cache_.Put(plan.ticket.session_id, v.number,
               std::make_shared<const std::string>(v.source->bytes), v.sha256);
    Status st =
        WriteFileAtomically(dir, DataDirLayout::VersionFileName(v.number, v.source->file_extension),
                            v.source->bytes, kCacheTempPrefix);
    if (!st.ok()) log::Warn(kLog, "cannot write the local copy: " + st.error().message);
  }
}

std::vector<VersionInfo> PostgresSessionStore::CommittedVersions(const CommitPlan& plan) const {
  std::vector<VersionInfo> out;
  for (const CommitPlan::Planned& v : plan.versions) {
    const NewVersion& nv = *v.source;
    VersionInfo info;
    info.session_id = plan.ticket.session_id;
    info.version = v.number;
    info.parent = nv.parent;
    info.operation = nv.operation;
    info.prompt = nv.prompt;
    info.mime_type = nv.mime_type;
    info.bytes = static_cast<int64_t>(nv.bytes.size());
    info.sha256 = v.sha256;
    info.path = LocalPath(plan.ticket.session_id, v.number, nv.file_extension);
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

Status PostgresSessionStore::ClearInTurn(const PgTicket& ticket) {
  std::vector<std::string> digests;
  {
    ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
    RETURN_IF_ERROR(conn->Run("BEGIN", "starting a clear"));
    auto fail = [&](const Error& e) -> Status {
      if (!conn->Broken()) (void)(conn)->Run("ROLLBACK", "rolling back a failed clear");
      return e;
    };
    if (Status st = CheckTicket(*conn, ticket); !st.ok()) return fail(st.error());
    Result<PgResult> gone = conn->Exec(
        "WITH d AS (DELETE FROM imgmcp.versions WHERE session_id = $1 RETURNING sha256), "
        "u AS (UPDATE imgmcp.sessions SET updated_ms = $2 WHERE session_id = $1) "
        "SELECT DISTINCT sha256 FROM d",
        {PgParam::Text(ticket.session_id), PgParam::Int(NowMs())}, "clearing a session");
    if (!gone.ok()) return fail(gone.error());
    for (int i = 0; i < gone->Rows(); ++i) digests.push_back(gone->Text(i, 0));
    Result<PgResult> notified = conn->Exec(
        "SELECT pg_notify('imgmcp_commits', $1)",
        {PgParam::Text(origin_ + " " + ticket.session_id + " 0 0")}, "announcing the clear");
    if (!notified.ok()) return fail(notified.error());
    RETURN_IF_ERROR(conn->Run("COMMIT", "committing the clear"));
  }
  cache_.EraseSession(ticket.session_id);
  std::error_code ec;
  std::filesystem::remove_all(cache_dir_ / ticket.session_id, ec);
  CollectBlobs(digests);
  return Status::Ok();
}

void PostgresSessionStore::CollectBlobs(const std::vector<std::string>& digests) {
  if (digests.empty()) return;
  Result<PgPool::Lease> conn = pool_.Acquire();
  if (!conn.ok()) return;  // left for later: the next prune or clear of the digest retries
  // A version committed meanwhile (on any replica) holds a KEY SHARE lock on its blob, so this
  // waits for it and then fails on the reference instead of deleting referenced bytes.
  Result<PgResult> r = (*conn)->Exec(
      "DELETE FROM imgmcp.blobs b WHERE b.sha256 = ANY($1::text[]) AND NOT EXISTS "
      "(SELECT 1 FROM imgmcp.versions v WHERE v.sha256 = b.sha256)",
      {PgParam::Text(DigestArray(digests))}, "deleting unreferenced image bytes");
  if (!r.ok()) log::Debug(kLog, r.error().message);
}

// ---------------------------------------------------------------------------------------------
// Reads

template <typename T, typename Fn>
Result<T> PostgresSessionStore::WithReadConnection(Fn&& fn) {
  for (int attempt = 0;; ++attempt) {
    ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
    Result<T> out = fn(*conn);
    if (out.ok() || attempt > 0 || !IsRetryableLoss(out.error()) || !conn->Broken()) {
      return out;
    }
    pool_.DropIdle();  // they are as dead as this one
  }
}

Result<VersionInfo> PostgresSessionStore::GetVersion(const std::string& session_id,
                                                     std::optional<int64_t> version) {
  ASSIGN_OR_RETURN(SessionSnapshot snapshot, ReadSession(session_id, version, false));
  if (!snapshot.version.has_value()) {
    return NoSuchVersionError(session_id, version, snapshot.last_issued_version);
  }
  return std::move(*snapshot.version);
}

Result<SessionSnapshot> PostgresSessionStore::ReadSession(const std::string& session_id,
                                                          std::optional<int64_t> version,
                                                          bool include_history) {
  if (!IsValidSessionId(session_id)) return InvalidSessionIdError(session_id);
  // One statement, so one snapshot: the session row and its versions of the same moment.
  const std::string sql =
      include_history
          ? std::string("SELECT s.last_version, s.expired, ") + kVersionColumns +
                " FROM imgmcp.sessions s LEFT JOIN imgmcp.versions v ON v.session_id = "
                "s.session_id WHERE s.session_id = $1 ORDER BY v.version"
          : std::string("SELECT s.last_version, s.expired, ") + kVersionColumns +
                " FROM imgmcp.sessions s LEFT JOIN LATERAL (SELECT * FROM imgmcp.versions "
                "WHERE session_id = s.session_id AND ($2::bigint IS NULL OR version = $2) "
                "ORDER BY version DESC LIMIT 1) v ON true WHERE s.session_id = $1";
  std::vector<PgParam> params = {PgParam::Text(session_id)};
  if (!include_history) params.push_back(PgParam::OptionalInt(version));
  ASSIGN_OR_RETURN(
      SessionSnapshot snapshot,
      WithReadConnection<SessionSnapshot>([&](PgConnection& conn) -> Result<SessionSnapshot> {
        Result<PgResult> r = conn.Exec(sql, params, "reading a session");
        if (!r.ok()) return r.error();
        if (r->Rows() == 0 || r->Bool(0, 1)) return UnknownSessionError(session_id);
        SessionSnapshot out;
        out.last_issued_version = r->Int(0, 0);
        for (int i = 0; i < r->Rows(); ++i) {
          std::optional<VersionInfo> v = VersionFromRow(*r, i, 2, session_id);
          if (!v) continue;
          v->path = LocalPath(session_id, v->version, v->path);
          if (!include_history) {
            out.version = std::move(v);
          } else {
            if (version.has_value() ? v->version == *version : i + 1 == r->Rows()) out.version = v;
            out.history.push_back(std::move(*v));
          }
        }
        return out;
      }));
  if (snapshot.version.has_value()) {
    if (Status st = EnsureLocalCopy(*snapshot.version); !st.ok()) {
      // Pruned or cleared between the two reads: the snapshot stands, without that version.
      if (st.error().code != ErrorCode::kNotFound) return st.error();
    }
  }
  return snapshot;
}

Status PostgresSessionStore::EnsureLocalCopy(const VersionInfo& version) {
  struct stat st {};
  if (::stat(version.path.c_str(), &st) == 0 && st.st_size == version.bytes) return Status::Ok();
  ASSIGN_OR_RETURN(std::string bytes, ReadImage(version));
  const std::filesystem::path dir = version.path.parent_path();
  RETURN_IF_ERROR(EnsureDir(dir));
  return WriteFileAtomically(dir, version.path.filename().string(), bytes, kCacheTempPrefix);
}

Result<std::string> PostgresSessionStore::ReadImage(const VersionInfo& version) {
  const std::string& id = version.session_id;
  if (!IsValidSessionId(id)) return InvalidSessionIdError(id);
  const std::string missing =
      "session " + id + " has no version " + std::to_string(version.version);
  std::shared_ptr<const std::string> cached = cache_.Get(id, version.version, version.sha256);
  Result<std::string> out =
      WithReadConnection<std::string>([&](PgConnection& conn) -> Result<std::string> {
        if (cached != nullptr) {
          // Still a version? (Another replica may have cleared or pruned it.)
          ASSIGN_OR_RETURN(
              PgResult r,
              conn.Exec("SELECT 1 FROM imgmcp.versions WHERE session_id = $1 AND version = $2",
                        {PgParam::Text(id), PgParam::Int(version.version)},
                        "looking up a version"));
          if (r.Rows() == 0) return MakeError(ErrorCode::kNotFound, missing);
          return *cached;
        }
        ASSIGN_OR_RETURN(
            PgResult r,
            conn.Exec("SELECT v.sha256, b.bytes FROM imgmcp.versions v JOIN imgmcp.blobs b ON "
                      "b.sha256 = v.sha256 WHERE v.session_id = $1 AND v.version = $2",
                      {PgParam::Text(id), PgParam::Int(version.version)}, "reading an image",
                      /*binary_result=*/true));
        if (r.Rows() == 0) return MakeError(ErrorCode::kNotFound, missing);
        const std::string recorded = r.Text(0, 0);
        std::string bytes = r.Text(0, 1);
        const std::string sha = Sha256Hex(bytes);
        if (sha != recorded) {
          return MakeError(ErrorCode::kDataLoss, "the image bytes of session " + id + " version " +
                                                     std::to_string(version.version) +
                                                     " in PostgreSQL are corrupt " + "(sha256 " +
                                                     sha + ", recorded " + recorded + ")");
        }
        cache_.Put(id, version.version, std::make_shared<const std::string>(bytes), sha);
        return bytes;
      });
  if (!out.ok() && out.error().code == ErrorCode::kNotFound) cache_.Erase(id, version.version);
  return out;
}

Result<SessionPage> PostgresSessionStore::ListSessions(const std::optional<std::string>& cursor,
                                                       int limit) {
  limit = ClampPageSize(limit);
  int64_t after_ms = 0;
  std::string after_id;
  if (cursor.has_value() && !DecodeSessionCursor(*cursor, &after_ms, &after_id)) {
    return MakeError(ErrorCode::kInvalidArgument, "invalid cursor");
  }
  const std::string sql =
      std::string("SELECT s.session_id, s.updated_ms, ") + kVersionColumns +
      " FROM imgmcp.sessions s LEFT JOIN LATERAL (SELECT * FROM imgmcp.versions WHERE "
      "session_id = s.session_id ORDER BY version DESC LIMIT 1) v ON true WHERE NOT s.expired " +
      (cursor.has_value() ? "AND (s.updated_ms < $2 OR (s.updated_ms = $2 AND s.session_id < $3)) "
                          : "") +
      "ORDER BY s.updated_ms DESC, s.session_id DESC LIMIT $1";
  std::vector<PgParam> params = {PgParam::Int(limit + 1)};
  if (cursor.has_value()) {
    params.push_back(PgParam::Int(after_ms));
    params.push_back(PgParam::Text(after_id));
  }
  return WithReadConnection<SessionPage>([&](PgConnection& conn) -> Result<SessionPage> {
    ASSIGN_OR_RETURN(PgResult r, conn.Exec(sql, params, "listing sessions"));
    SessionPage out;
    const int rows = std::min(r.Rows(), limit);
    for (int i = 0; i < rows; ++i) {
      SessionSummary s;
      s.session_id = r.Text(i, 0);
      if (!IsValidSessionId(s.session_id)) continue;
      s.current = VersionFromRow(r, i, 2, s.session_id);
      if (s.current) s.current->path = LocalPath(s.session_id, s.current->version, s.current->path);
      s.current_version = s.current.has_value() ? s.current->version : 0;
      s.updated_at = FormatRfc3339(
          std::chrono::system_clock::time_point(std::chrono::milliseconds(r.Int(i, 1))));
      out.sessions.push_back(std::move(s));
    }
    if (r.Rows() > limit && rows > 0) {
      out.next_cursor = EncodeSessionCursor(r.Int(rows - 1, 1), r.Text(rows - 1, 0));
    }
    return out;
  });
}

bool PostgresSessionStore::SessionExists(const std::string& session_id) {
  if (!IsValidSessionId(session_id)) return false;
  Result<bool> exists = WithReadConnection<bool>([&](PgConnection& conn) -> Result<bool> {
    ASSIGN_OR_RETURN(
        PgResult r, conn.Exec("SELECT 1 FROM imgmcp.sessions WHERE session_id = $1 AND NOT expired",
                              {PgParam::Text(session_id)}, "looking up a session"));
    return r.Rows() == 1;
  });
  return exists.ok() && *exists;
}

}  // namespace imgmcp::session::postgres
