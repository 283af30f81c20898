#include "session/postgres/postgres_session_store.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

#include "common/decimal.h"
#include "common/log.h"
#include "common/random.h"
#include "session/data_dir.h"
#include "session/file_io.h"
#include "session/postgres/log_tag.h"
#include "session/postgres/pg_schema.h"
#include "session/principal_scope.h"
#include "session/version_rules.h"

namespace imgmcp::session::postgres {
namespace {

std::string DigestArray(const std::vector<std::string>& digests) {
  std::string out = "{";
  for (size_t i = 0; i < digests.size(); ++i) {
    if (i > 0) out += ",";
    out += digests[i];  // hex: nothing to quote
  }
  return out + "}";
}

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

// Records an idempotency key in the transaction on `conn`: `column` ("version" for a commit,
// "next_version" for a clear) is `number`. A session without a row records nothing (a clear of
// a session never committed to); a key the session already has is kInvalidArgument.
Status InsertKey(PgConnection& conn, const std::string& session_id, const IdempotencyRecord& key,
                 const std::string& column, int64_t number, int64_t now_ms) {
  ASSIGN_OR_RETURN(
      PgResult r,
      conn.Exec("INSERT INTO imgmcp.idempotency_keys(session_id, idempotency_key, digest, " +
                    column +
                    ", created_ms) SELECT $1, $2, $3, $4, $5 FROM imgmcp.sessions WHERE "
                    "session_id = $1 ON CONFLICT (session_id, idempotency_key) DO NOTHING "
                    "RETURNING 1",
                {PgParam::Text(session_id), PgParam::Text(key.key), PgParam::Text(key.digest),
                 PgParam::Int(number), PgParam::Int(now_ms)},
                "recording an idempotency key"));
  if (r.Rows() == 0 && column == "version") {
    return MakeError(ErrorCode::kInvalidArgument, "idempotency_key '" + key.key +
                                                      "' is already recorded in session '" +
                                                      session_id + "'; nothing was committed");
  }
  return Status::Ok();
}

}  // namespace

bool IsPostgresUrl(const std::string& store) {
  return store.rfind("postgresql://", 0) == 0 || store.rfind("postgres://", 0) == 0;
}

Status ProbePostgres(const std::string& url) {
  ASSIGN_OR_RETURN(std::string label, DescribeConninfo(url));
  RETURN_IF_ERROR(PgConnection::Connect(url, label));
  return Status::Ok();
}

// The turn: the ticket PgTurns granted, given back when the edit ends.
class PostgresSessionStore::PgTurnHold final : public TurnHold {
 public:
  explicit PgTurnHold(PgTurns::HeldTurn held) : held_(std::move(held)) {}
  const PgTicket& ticket() const { return held_.ticket(); }

 private:
  PgTurns::HeldTurn held_;
};

// ---------------------------------------------------------------------------------------------
// Open

PostgresSessionStore::PostgresSessionStore(const StoreOptions& options,
                                           const PostgresStoreOptions& pg, std::string label,
                                           const Clock& clock)
    : ChainStore(options, clock),
      origin_(RandomHex(8)),
      pool_(pg.url, std::move(label), pg.pool_size, options.metrics),
      task_rows_(pool_, origin_),
      spend_(pool_),
      audit_(pool_) {}

PostgresSessionStore::~PostgresSessionStore() {
  turns_.reset();  // stops the listener (and its callbacks) first
}

Result<std::unique_ptr<PostgresSessionStore>> PostgresSessionStore::Open(
    const StoreOptions& options, const PostgresStoreOptions& pg, const Clock& clock) {
  if (options.data_dir.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the PostgreSQL session store needs a data directory for its local cache");
  }
  if (pg.pool_size < 1) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the connection pool needs at least 1 connection");
  }
  ASSIGN_OR_RETURN(StoreOptions resolved, ResolveStoreOptions(options));
  ASSIGN_OR_RETURN(std::string label, DescribeConninfo(pg.url));
  std::unique_ptr<PostgresSessionStore> store(new PostgresSessionStore(resolved, pg, label, clock));
  RETURN_IF_ERROR(store->Initialize());
  return store;
}

Status PostgresSessionStore::Initialize() {
  std::string store_id;
  {
    ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
    ASSIGN_OR_RETURN(store_id, MigratePgSchema(*conn));
  }
  if (store_id.empty() || store_id.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return MakeError(ErrorCode::kDataLoss, "the PostgreSQL database at " + pool_.label() +
                                               " has an invalid imgmcp store id");
  }
  cache_dir_ = options().data_dir / "pg-cache" / store_id;
  RETURN_IF_ERROR(EnsureDir(cache_dir_));
  ASSIGN_OR_RETURN(turns_,
                   PgTurns::Start(
                       pool_, [this](const std::string& payload) { OnCommitNotification(payload); },
                       [this](const std::string& payload) { task_rows_.OnNotification(payload); }));
  task_rows_.UseTurns(*turns_);
  if (options().idle_days > 0) RETURN_IF_ERROR(ExpireIdleSessions());
  return Status::Ok();
}

// Expires sessions idle for more than idle_days (and not in anybody's line right now): their
// versions go, the row stays (expired) so the counter survives.
Status PostgresSessionStore::ExpireIdleSessions() {
  std::map<std::string, std::vector<RemovedVersion>> expired;
  {
    ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
    ASSIGN_OR_RETURN(
        PgResult r,
        conn->Exec(
            "WITH idle AS (UPDATE imgmcp.sessions s SET expired = true WHERE NOT s.expired "
            "AND s.updated_ms < $1 AND NOT EXISTS (SELECT 1 FROM imgmcp.turn_tickets t "
            "WHERE t.session_id = s.session_id) RETURNING session_id), "
            "keys_gone AS (DELETE FROM imgmcp.idempotency_keys k USING idle WHERE k.session_id = "
            "idle.session_id AND k.version IS NULL) "
            "DELETE FROM imgmcp.versions v USING idle WHERE v.session_id = idle.session_id "
            "RETURNING v.session_id, v.version, v.sha256",
            {PgParam::Int(IdleCutoffMs())}, "expiring idle sessions"));
    for (int i = 0; i < r.Rows(); ++i) {
      expired[r.Text(i, 0)].push_back(RemovedVersion{r.Int(i, 1), r.Text(i, 2), ""});
    }
  }  // the connection goes back before the clean-up asks for one
  for (const auto& [session_id, removed] : expired) {
    if (IsValidStoredSessionId(session_id)) ForgetSession(session_id, removed);
  }
  if (!expired.empty()) {
    log::Info(kLog, "expired " + std::to_string(expired.size()) + " idle session(s)");
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Notifications from other replicas

void PostgresSessionStore::SetChangeListener(ChangeListener listener) {
  MutexLock lock(listener_mu_);
  listener_ = std::move(listener);
}

void PostgresSessionStore::SetTaskListener(TaskListener listener) {
  task_rows_.SetListener(std::move(listener));
}

// Payload: "<origin> <session_id> <version> <new: 0|1>" (version 0: a clear).
void PostgresSessionStore::OnCommitNotification(const std::string& payload) {
  std::string_view rest = payload;
  const auto next_field = [&rest] {
    const size_t space = std::min(rest.find(' '), rest.size());
    const std::string_view field = rest.substr(0, space);
    rest.remove_prefix(std::min(space + 1, rest.size()));
    return field;
  };
  const std::string_view origin = next_field();
  StoreChange change;
  change.session_id = std::string(next_field());
  const std::optional<int64_t> version = ParseDecimal<int64_t>(next_field());
  const std::optional<int> new_session = ParseDecimal<int>(rest);
  if (origin.empty() || change.session_id.empty() || !version || !new_session) {
    log::Warn(kLog, "ignoring a malformed imgmcp_commits notification");
    return;
  }
  if (origin == origin_ || !IsValidStoredSessionId(change.session_id)) return;
  change.version = *version;
  change.new_session = *new_session != 0;
  if (change.version == 0) image_cache().EraseSession(change.session_id);
  MutexLock lock(listener_mu_);
  if (listener_) listener_(change);
}

// ---------------------------------------------------------------------------------------------
// Turns

Result<std::unique_ptr<TurnReservation>> PostgresSessionStore::ReserveTurn(
    const std::string& session_id) {
  if (!IsValidStoredSessionId(session_id)) return InvalidSessionIdError(session_id);
  return turns_->Reserve(session_id);
}

Result<std::unique_ptr<ChainStore::TurnHold>> PostgresSessionStore::WaitForTurn(
    std::unique_ptr<TurnReservation> reservation, const TurnOptions& options) {
  ASSIGN_OR_RETURN(PgTurns::HeldTurn held, turns_->Wait(std::move(reservation), options));
  return std::unique_ptr<TurnHold>(new PgTurnHold(std::move(held)));
}

// ---------------------------------------------------------------------------------------------
// Writes: one transaction each — the turn check, the counter's compare-and-set, blobs, version
// rows, the retention prune and a NOTIFY; when the connection breaks during COMMIT, CheckOutcome
// looks the outcome up.

Status PostgresSessionStore::WriteRows(PgConnection& conn, const CommitPlan& plan,
                                       const PgTicket& ticket,
                                       std::vector<RemovedVersion>* pruned) {
  const std::string& id = plan.session_id;
  RETURN_IF_ERROR(CheckTicket(conn, ticket));
  // The counter moves from the number this turn started with, or not at all.
  ASSIGN_OR_RETURN(
      PgResult cas,
      conn.Exec(
          "INSERT INTO imgmcp.sessions AS s (session_id, last_version, created_ms, updated_ms, "
          "principal) VALUES ($1, $2, $3, $3, $5) ON CONFLICT (session_id) DO UPDATE SET "
          "last_version = $2, "
          "updated_ms = $3, expired = false WHERE s.last_version = $4 RETURNING 1",
          {PgParam::Text(id), PgParam::Int(plan.versions.back().number), PgParam::Int(plan.now_ms),
           PgParam::Int(plan.last_issued),
           PgParam::Text(std::string(SplitScopedSessionId(id).principal))},
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
  if (plan.key.has_value()) {
    RETURN_IF_ERROR(
        InsertKey(conn, id, *plan.key, "version", plan.versions.back().number, plan.now_ms));
  }
  if (!plan.claims_task.empty()) {
    RETURN_IF_ERROR(ClaimTaskForCommit(conn, plan.claims_task, plan.versions.back().number));
  }
  if (options().max_versions_per_session > 0) {
    ASSIGN_OR_RETURN(
        PgResult old,
        conn.Exec(
            "DELETE FROM imgmcp.versions WHERE session_id = $1 AND version <= (SELECT version FROM "
            "imgmcp.versions WHERE session_id = $1 ORDER BY version DESC OFFSET $2 LIMIT 1) "
            "RETURNING version, sha256",
            {PgParam::Text(id), PgParam::Int(options().max_versions_per_session)},
            "pruning old versions"));
    for (int i = 0; i < old.Rows(); ++i) {
      pruned->push_back(RemovedVersion{old.Int(i, 0), old.Text(i, 1), ""});
    }
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
                              std::to_string(last.number) + " of session " + plan.session_id +
                              " was committed is not known";
  Result<PgPool::Lease> fresh = pool_.Acquire();
  if (!fresh.ok()) {
    return MakeError(ErrorCode::kUnavailable,
                     unknown + " until PostgreSQL is back (get_image will show it)");
  }
  Result<PgResult> r =
      (*fresh)->Exec("SELECT sha256 FROM imgmcp.versions WHERE session_id = $1 AND version = $2",
                     {PgParam::Text(plan.session_id), PgParam::Int(last.number)},
                     "checking whether a commit happened");
  if (!r.ok()) return MakeError(ErrorCode::kUnavailable, unknown);
  if (r->Rows() == 1 && r->Text(0, 0) == last.sha256) return Status::Ok();
  return MakeError(commit_error.code, commit_error.message + "; nothing was committed");
}

Result<std::vector<RemovedVersion>> PostgresSessionStore::WriteCommit(TurnHold& turn,
                                                                      const CommitPlan& plan) {
  const PgTicket& ticket = static_cast<PgTurnHold&>(turn).ticket();
  std::vector<RemovedVersion> pruned;
  bool commit_broke = false;
  Status written = [&]() -> Status {
    ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
    return InTransaction(
        *conn, "committing", [&] { return WriteRows(*conn, plan, ticket, &pruned); },
        &commit_broke);
  }();  // the connection goes back (or, broken, away) before CheckOutcome takes another
  if (!written.ok()) {
    if (!commit_broke) return written.error();  // refused: nothing was committed
    RETURN_IF_ERROR(CheckOutcome(plan, written.error()));
  }
  return pruned;
}

Result<std::vector<RemovedVersion>> PostgresSessionStore::WriteClear(TurnHold& turn,
                                                                     const ClearPlan& plan) {
  const std::string& session_id = plan.session_id;
  const PgTicket& ticket = static_cast<PgTurnHold&>(turn).ticket();
  std::vector<RemovedVersion> removed;
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  RETURN_IF_ERROR(InTransaction(
      *conn, "committing the clear",
      [&]() -> Status {
        RETURN_IF_ERROR(CheckTicket(*conn, ticket));
        ASSIGN_OR_RETURN(
            PgResult gone,
            conn->Exec("WITH d AS (DELETE FROM imgmcp.versions WHERE session_id = $1 "
                       "RETURNING version, sha256), "
                       "u AS (UPDATE imgmcp.sessions SET updated_ms = $2 WHERE session_id = $1) "
                       "SELECT version, sha256 FROM d",
                       {PgParam::Text(session_id), PgParam::Int(plan.now_ms)},
                       "clearing a session"));
        for (int i = 0; i < gone.Rows(); ++i) {
          removed.push_back(RemovedVersion{gone.Int(i, 0), gone.Text(i, 1), ""});
        }
        // The versions' keys went with them (ON DELETE CASCADE); an earlier clear's goes here.
        RETURN_IF_ERROR(conn->Exec(
            "DELETE FROM imgmcp.idempotency_keys WHERE session_id = $1 AND version IS NULL",
            {PgParam::Text(session_id)}, "forgetting an earlier clear's key"));
        if (plan.key.has_value()) {
          RETURN_IF_ERROR(InsertKey(*conn, session_id, *plan.key, "next_version",
                                    plan.last_issued + 1, plan.now_ms));
        }
        // What the session's tasks kept of it goes too (their statuses and versions stay).
        RETURN_IF_ERROR(
            conn->Exec("UPDATE imgmcp.tasks SET request_json = '', result_json = '' "
                       "WHERE session_id = $1",
                       {PgParam::Text(session_id)}, "forgetting the tasks' payloads"));
        RETURN_IF_ERROR(conn->Exec("SELECT pg_notify('imgmcp_commits', $1)",
                                   {PgParam::Text(origin_ + " " + session_id + " 0 0")},
                                   "announcing the clear"));
        return Status::Ok();
      },
      nullptr));
  return removed;
}

void PostgresSessionStore::DeleteRemoved(const std::string& session_id,
                                         const std::vector<RemovedVersion>& removed,
                                         bool whole_session) {
  const std::filesystem::path dir = cache_dir_ / session_id;
  std::error_code ec;
  if (whole_session) {
    std::filesystem::remove_all(dir, ec);
  } else {
    // Local copies of any extension (the row is gone, so try every file of the version).
    for (const RemovedVersion& v : removed) {
      const std::string prefix = "v" + std::to_string(v.version) + ".";
      for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        if (entry.path().filename().string().rfind(prefix, 0) == 0) {
          RemoveFileQuietly(entry.path());
        }
      }
    }
  }
  std::vector<std::string> digests;
  digests.reserve(removed.size());
  for (const RemovedVersion& v : removed) digests.push_back(v.sha256);
  CollectBlobs(digests);
}

void PostgresSessionStore::AfterCommit(const CommitPlan& plan) {
  const std::filesystem::path dir = cache_dir_ / plan.session_id;
  if (Status st = EnsureDir(dir); !st.ok()) log::Warn(kLog, st.error().message);
  for (const CommitPlan::Planned& v : plan.versions) {
    Status st =
        WriteFileAtomically(dir, DataDirLayout::VersionFileName(v.number, v.source->file_extension),
                            v.source->bytes, DataDirLayout::kTempPrefix, Sync::kNone);
    if (!st.ok()) log::Warn(kLog, "cannot write the local copy: " + st.error().message);
  }
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

std::filesystem::path PostgresSessionStore::VersionPath(const std::string& session_id,
                                                        int64_t version,
                                                        const std::string& extension) const {
  return cache_dir_ / session_id / DataDirLayout::VersionFileName(version, extension);
}

// ---------------------------------------------------------------------------------------------
// The spend ledger

Result<int64_t> PostgresSessionStore::ReserveSpend(const SpendHold& hold,
                                                   const SpendBudgets& budgets) {
  return spend_.Reserve(hold, budgets);
}

Status PostgresSessionStore::SettleSpend(int64_t id, const SpendCharge& charge) {
  return spend_.Settle(id, charge);
}

Status PostgresSessionStore::RenewSpendHold(int64_t id, int64_t expires_ms) {
  return spend_.Renew(id, expires_ms);
}

Status PostgresSessionStore::ReleaseSpend(int64_t id) { return spend_.Release(id); }

Result<int64_t> PostgresSessionStore::CountCall(const std::string& principal, int64_t window_ms,
                                                int64_t forget_before_ms) {
  if (!IsValidPrincipal(principal)) return InvalidArgument("invalid principal");
  return spend_.CountCall(principal, window_ms, forget_before_ms);
}

Result<std::string> PostgresSessionStore::SharedKey(const std::string& name,
                                                    const std::string& candidate) {
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  // A key another replica keeps at the same moment is not visible to this statement's snapshot:
  // then the second read (a statement of its own) finds it.
  for (int attempt = 0; attempt < 2; ++attempt) {
    ASSIGN_OR_RETURN(
        PgResult r,
        conn->Exec("WITH kept AS (INSERT INTO imgmcp.shared_keys (name, value) VALUES ($1, $2) "
                   "ON CONFLICT (name) DO NOTHING RETURNING value) "
                   "SELECT value FROM kept UNION ALL "
                   "SELECT value FROM imgmcp.shared_keys WHERE name = $1 LIMIT 1",
                   {PgParam::Text(name), PgParam::Text(candidate)}, "reading a shared key"));
    if (r.Rows() == 1) return r.Text(0, 0);
  }
  return Error(ErrorCode::kInternal, "shared key: kept, yet not found");
}

Status PostgresSessionStore::RecordAudit(const AuditEvent& event) { return audit_.Insert(event); }

Result<std::vector<AuditEvent>> PostgresSessionStore::ReadAudit(const AuditQuery& query) {
  return audit_.Read(query);
}

Result<int64_t> PostgresSessionStore::ForgetAudit(int64_t before_ms) {
  return audit_.Forget(before_ms);
}

Result<SpendTotals> PostgresSessionStore::SpendTotalsFor(const SpendHold& hold) {
  return spend_.TotalsFor(hold);
}

}  // namespace imgmcp::session::postgres
