#include "session/sqlite/sqlite_session_store.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>
#include <utility>

#include "common/log.h"
#include "session/file_io.h"
#include "session/principal_scope.h"
#include "session/spend_rules.h"
#include "session/sqlite/file_lock.h"
#include "session/sqlite/schema.h"
#include "session/sqlite/sqlite_audit.h"
#include "session/sqlite/sqlite_rows.h"
#include "session/sqlite/sqlite_spend.h"
#include "session/sqlite/sqlite_tasks.h"
#include "session/version_rules.h"

namespace imgmcp::session::sqlite {
namespace {

// Lists regular files and directories of `dir` (names only, without "." and "..").
std::vector<std::pair<std::string, bool>> ListDir(const std::filesystem::path& dir) {
  std::vector<std::pair<std::string, bool>> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (::lstat((dir / name).c_str(), &st) != 0) continue;
    out.emplace_back(name, S_ISDIR(st.st_mode));
  }
  ::closedir(d);
  return out;
}

// A place in one session's in-process line.
class SqliteTurnReservation final : public TurnReservation {
 public:
  SqliteTurnReservation(TurnQueue::Ticket ticket, std::string session_id)
      : ticket(std::move(ticket)), id(std::move(session_id)) {}
  const std::string& session_id() const override { return id; }

  TurnQueue::Ticket ticket;
  const std::string id;
};

}  // namespace

// The turn: the in-process ticket and the cross-process flock. Members are destroyed in reverse
// order, so the flock goes first and the next in-process ticket holder finds it free at once.
class SqliteSessionStore::SqliteTurnHold final : public TurnHold {
 public:
  SqliteTurnHold(TurnQueue::Ticket ticket, FileLock lock)
      : ticket_(std::move(ticket)), lock_(std::move(lock)) {}

 private:
  TurnQueue::Ticket ticket_;  // the in-process FIFO turn
  FileLock lock_;             // the cross-process turn
};

// ---------------------------------------------------------------------------------------------
// Open

SqliteSessionStore::SqliteSessionStore(const StoreOptions& options, const Clock& clock)
    : ChainStore(options, clock),
      layout_(options.data_dir),
      pool_(layout_.DatabasePath()),
      task_rows_(pool_, layout_.LocksDir()) {}

SqliteSessionStore::~SqliteSessionStore() = default;

Result<std::unique_ptr<SqliteSessionStore>> SqliteSessionStore::Open(const StoreOptions& options,
                                                                     const Clock& clock) {
  ASSIGN_OR_RETURN(StoreOptions resolved, ResolveStoreOptions(options));
  std::unique_ptr<SqliteSessionStore> store(new SqliteSessionStore(resolved, clock));
  RETURN_IF_ERROR(store->Initialize());
  return store;
}

Status SqliteSessionStore::Initialize() {
  for (const auto& dir : {layout_.root(), layout_.ImagesDir(), layout_.LocksDir()}) {
    RETURN_IF_ERROR(EnsureDir(dir));
  }
  {
    // Processes opening one data dir at the same moment would race on the switch to WAL (SQLite
    // answers "database is locked" at once, not after the busy timeout) and on migrations: one
    // at a time. The name starts with '.', which no session id can, so it never meets a
    // session's lock.
    ASSIGN_OR_RETURN(FileLock open_lock,
                     FileLock::Acquire(layout_.LocksDir() / ".store-open.lock", {}));
    ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, PrepareDatabase());
    RETURN_IF_ERROR(task_rows_.TakeRunnerLock());
    pool_.Add(std::move(db));
  }  // the database is ready for everyone
  if (options().idle_days > 0) RETURN_IF_ERROR(ExpireIdleSessions());
  RETURN_IF_ERROR(SweepOrphans());
  Result<int64_t> swept = SweepTasks();
  if (!swept.ok()) return swept.error();
  return Status::Ok();
}

// The first connection: WAL mode, an integrity check, the schema migrated.
Result<std::unique_ptr<SqliteDb>> SqliteSessionStore::PrepareDatabase() {
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, pool_.OpenUnconfigured());
  {
    // Persistent; the first statement that touches the file, so a corrupt file shows up here.
    ASSIGN_OR_RETURN(Statement wal, db->Prepare("PRAGMA journal_mode=WAL"));
    ASSIGN_OR_RETURN(bool row, wal.Step());
    if (!row || wal.ColumnText(0) != "wal") {
      return MakeError(ErrorCode::kFailedPrecondition,
                       "cannot switch " + layout_.DatabasePath().string() + " to WAL mode");
    }
  }
  {
    ASSIGN_OR_RETURN(Statement check, db->Prepare("PRAGMA quick_check"));
    ASSIGN_OR_RETURN(bool row, check.Step());
    if (!row || check.ColumnText(0) != "ok") {
      return MakeError(ErrorCode::kDataLoss,
                       "database " + layout_.DatabasePath().string() +
                           " failed its integrity check: " + (row ? check.ColumnText(0) : ""));
    }
  }
  RETURN_IF_ERROR(MigrateSchema(*db, NowMs()));
  RETURN_IF_ERROR(SqlitePool::Configure(*db));
  return db;
}

// Expires sessions idle for more than idle_days: their versions and files go, the row stays
// (expired=1) so the counter survives and a version number is never reused.
Status SqliteSessionStore::ExpireIdleSessions() {
  const int64_t cutoff = IdleCutoffMs();
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  ASSIGN_OR_RETURN(std::vector<std::string> idle, rows::IdleSessions(lease.db(), cutoff));
  for (const std::string& id : idle) {
    if (IsValidStoredSessionId(id)) RETURN_IF_ERROR(ExpireIfIdle(lease.db(), id, cutoff));
  }
  return Status::Ok();
}

Status SqliteSessionStore::ExpireIfIdle(SqliteDb& db, const std::string& session_id,
                                        int64_t cutoff_ms) {
  ASSIGN_OR_RETURN(std::optional<FileLock> lock,
                   FileLock::TryAcquire(layout_.SessionLockPath(session_id)));
  if (!lock.has_value()) return Status::Ok();  // in use by another process right now: not idle
  bool expired = false;
  std::vector<RemovedVersion> removed;
  RETURN_IF_ERROR(pool_.InWriteTransaction(db, [&]() -> Status {
    ASSIGN_OR_RETURN(std::optional<rows::SessionRow> row, rows::LoadSession(db, session_id));
    if (!row.has_value() || row->expired || row->updated_ms >= cutoff_ms) return Status::Ok();
    ASSIGN_OR_RETURN(removed, rows::DeleteVersions(db, session_id));
    expired = true;
    RETURN_IF_ERROR(rows::DeleteClearKeys(db, session_id));
    return rows::MarkExpired(db, session_id);
  }));
  if (!expired) return Status::Ok();
  ForgetSession(session_id, removed);
  log::Info("session", "expired idle session " + session_id + " (" +
                           std::to_string(removed.size()) + " image(s) removed)");
  return Status::Ok();
}

// Deletes temp files and image files that no row refers to (left by a crash between rename and
// row commit, or between row delete and unlink). A session is swept only while holding its flock,
// so a commit in flight in another process is never mistaken for an orphan.
Status SqliteSessionStore::SweepOrphans() {
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  for (const auto& [name, is_dir] : ListDir(layout_.ImagesDir())) {
    if (!is_dir) {
      if (name.rfind(DataDirLayout::kTempPrefix, 0) == 0) {
        RemoveFileQuietly(layout_.ImagesDir() / name);
      }
      continue;
    }
    if (!IsValidStoredSessionId(name)) {
      log::Warn("session",
                "ignoring unexpected directory " + (layout_.ImagesDir() / name).string());
      continue;
    }
    RETURN_IF_ERROR(SweepSession(lease.db(), name));
  }
  return Status::Ok();
}

Status SqliteSessionStore::SweepSession(SqliteDb& db, const std::string& session_id) {
  ASSIGN_OR_RETURN(std::optional<FileLock> lock,
                   FileLock::TryAcquire(layout_.SessionLockPath(session_id)));
  if (!lock.has_value()) return Status::Ok();  // a turn is running in another process
  ASSIGN_OR_RETURN(std::vector<std::string> files, rows::LoadFileNames(db, session_id));
  const std::set<std::string> referenced(files.begin(), files.end());
  const std::filesystem::path dir = layout_.SessionImageDir(session_id);
  int removed = 0;
  for (const auto& [file, file_is_dir] : ListDir(dir)) {
    if (file_is_dir || referenced.count(file) != 0) continue;
    if (file.rfind(DataDirLayout::kTempPrefix, 0) != 0) {
      log::Info("session", "removing orphan image file " + (dir / file).string());
    }
    if (RemoveFileQuietly(dir / file)) ++removed;
  }
  if (removed > 0) (void)SyncDir(dir);
  if (referenced.empty()) ::rmdir(dir.c_str());  // only succeeds when empty
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Turns

Result<std::unique_ptr<TurnReservation>> SqliteSessionStore::ReserveTurn(
    const std::string& session_id) {
  if (!IsValidStoredSessionId(session_id)) return InvalidSessionIdError(session_id);
  return std::unique_ptr<TurnReservation>(
      new SqliteTurnReservation(turns_.Draw(session_id), session_id));
}

Result<int64_t> SqliteSessionStore::ReserveSpend(const SpendHold& hold,
                                                 const SpendBudgets& budgets) {
  RETURN_IF_ERROR(ValidateSpendHold(hold));
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  int64_t id = 0;
  RETURN_IF_ERROR(pool_.InWriteTransaction(lease.db(), [&]() -> Status {
    ASSIGN_OR_RETURN(id, spend::ReserveHold(lease.db(), hold, budgets));
    return Status::Ok();
  }));
  return id;
}

Status SqliteSessionStore::SettleSpend(int64_t id, const SpendCharge& charge) {
  RETURN_IF_ERROR(ValidateSpendCharge(charge));
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  return pool_.InWriteTransaction(lease.db(),
                                  [&]() { return spend::Settle(lease.db(), id, charge); });
}

Status SqliteSessionStore::RenewSpendHold(int64_t id, int64_t expires_ms) {
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  return pool_.InWriteTransaction(lease.db(),
                                  [&]() { return spend::Renew(lease.db(), id, expires_ms); });
}

Status SqliteSessionStore::ReleaseSpend(int64_t id) {
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  return pool_.InWriteTransaction(lease.db(), [&]() { return spend::Release(lease.db(), id); });
}

Result<int64_t> SqliteSessionStore::CountCall(const std::string& principal, int64_t window_ms,
                                              int64_t forget_before_ms) {
  if (!IsValidPrincipal(principal)) return InvalidArgument("invalid principal");
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  int64_t calls = 0;
  RETURN_IF_ERROR(pool_.InWriteTransaction(lease.db(), [&]() -> Status {
    ASSIGN_OR_RETURN(calls, spend::CountCall(lease.db(), principal, window_ms, forget_before_ms));
    return Status::Ok();
  }));
  return calls;
}

Result<std::string> SqliteSessionStore::SharedKey(const std::string& name,
                                                  const std::string& candidate) {
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  std::string key;
  RETURN_IF_ERROR(pool_.InWriteTransaction(lease.db(), [&]() -> Status {
    ASSIGN_OR_RETURN(Statement keep,
                     lease.db().Prepare("INSERT INTO shared_keys(name, value) VALUES(?1, ?2) "
                                        "ON CONFLICT(name) DO NOTHING"));
    keep.Bind(1, name).Bind(2, candidate);
    RETURN_IF_ERROR(keep.Run());
    ASSIGN_OR_RETURN(Statement read,
                     lease.db().Prepare("SELECT value FROM shared_keys WHERE name = ?1"));
    read.Bind(1, name);
    ASSIGN_OR_RETURN(bool row, read.Step());
    if (!row) return Error(ErrorCode::kInternal, "shared key: kept, yet not found");
    key = read.ColumnText(0);
    return read.Run();
  }));
  return key;
}

Status SqliteSessionStore::RecordAudit(const AuditEvent& event) {
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  return pool_.InWriteTransaction(lease.db(), [&]() { return audit::Insert(lease.db(), event); });
}

Result<std::vector<AuditEvent>> SqliteSessionStore::ReadAudit(const AuditQuery& query) {
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  return audit::Read(lease.db(), query);
}

Result<int64_t> SqliteSessionStore::ForgetAudit(int64_t before_ms) {
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  int64_t removed = 0;
  RETURN_IF_ERROR(pool_.InWriteTransaction(lease.db(), [&]() -> Status {
    ASSIGN_OR_RETURN(removed, audit::Forget(lease.db(), before_ms));
    return Status::Ok();
  }));
  return removed;
}

Result<SpendTotals> SqliteSessionStore::SpendTotalsFor(const SpendHold& hold) {
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  return spend::Totals(lease.db(), hold);
}

Result<std::unique_ptr<ChainStore::TurnHold>> SqliteSessionStore::WaitForTurn(
    std::unique_ptr<TurnReservation> reservation, const TurnOptions& options) {
  auto* reserved = dynamic_cast<SqliteTurnReservation*>(reservation.get());
  if (reserved == nullptr) {
    return MakeError(ErrorCode::kInternal, "a turn reservation from another store was used");
  }
  RETURN_IF_ERROR(turns_.Wait(reserved->ticket, options.cancel, options.on_queued));
  TurnQueue::Ticket ticket = std::move(reserved->ticket);
  ASSIGN_OR_RETURN(FileLock lock, FileLock::Acquire(layout_.SessionLockPath(reserved->id),
                                                    options.cancel, options.on_other_process));
  return std::unique_ptr<TurnHold>(new SqliteTurnHold(std::move(ticket), std::move(lock)));
}

Result<ChainStore::TurnStart> SqliteSessionStore::ReadTurnStart(const std::string& session_id) {
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  // A new (or expired) session gets its row from its first commit, so a turn that commits
  // nothing — a failed generate — leaves no session behind. An expired row keeps its counter.
  ASSIGN_OR_RETURN(std::optional<rows::SessionRow> row, rows::LoadSession(lease.db(), session_id));
  TurnStart start;
  start.last_issued = row.has_value() ? row->last_version : 0;
  if (row.has_value() && !row->expired) {
    ASSIGN_OR_RETURN(start.current,
                     rows::LoadVersion(lease.db(), layout_, session_id, std::nullopt));
  }
  return start;
}

// ---------------------------------------------------------------------------------------------
// Writes: the files first (durable, under their final names, invisible until their rows exist),
// then in one IMMEDIATE transaction the rows and the retention prune. A crash between the two
// leaves orphan files that the start-up sweep removes.

Status SqliteSessionStore::WriteVersionFiles(const CommitPlan& plan,
                                             const std::vector<std::string>& files) {
  const std::filesystem::path dir = layout_.SessionImageDir(plan.session_id);
  RETURN_IF_ERROR(EnsureDir(dir));
  for (size_t i = 0; i < plan.versions.size(); ++i) {
    Status st = WriteFileAtomically(dir, files[i], plan.versions[i].source->bytes,
                                    DataDirLayout::kTempPrefix);
    if (!st.ok()) {
      for (size_t j = 0; j < i; ++j) RemoveFileQuietly(dir / files[j]);
      return st;
    }
  }
  return Status::Ok();
}

void SqliteSessionStore::DiscardVersionFiles(const CommitPlan& plan,
                                             const std::vector<std::string>& files) {
  const std::filesystem::path dir = layout_.SessionImageDir(plan.session_id);
  for (const std::string& file : files) RemoveFileQuietly(dir / file);
}

Result<std::vector<RemovedVersion>> SqliteSessionStore::WriteCommit(TurnHold&,
                                                                    const CommitPlan& plan) {
  std::vector<std::string> files;
  for (const CommitPlan::Planned& v : plan.versions) {
    files.push_back(DataDirLayout::VersionFileName(v.number, v.source->file_extension));
  }
  RETURN_IF_ERROR(WriteVersionFiles(plan, files));
  Result<Lease> lease = pool_.Acquire();
  if (!lease.ok()) {
    DiscardVersionFiles(plan, files);
    return lease.error();
  }
  SqliteDb& db = lease->db();
  std::vector<RemovedVersion> pruned;
  Status written = pool_.InWriteTransaction(db, [&]() -> Status {
    RETURN_IF_ERROR(rows::InsertCommit(db, plan, files));
    if (!plan.claims_task.empty()) {
      RETURN_IF_ERROR(tasks::ClaimForCommit(db, plan.claims_task, plan.versions.back().number));
    }
    if (options().max_versions_per_session <= 0) return Status::Ok();
    ASSIGN_OR_RETURN(pruned,
                     rows::PruneVersions(db, plan.session_id, options().max_versions_per_session));
    return Status::Ok();
  });
  if (!written.ok()) {
    // Keep the files only if the rows made it after all (a COMMIT error after the data hit disk).
    const CommitPlan::Planned& last = plan.versions.back();
    Result<std::optional<VersionInfo>> check =
        rows::LoadVersion(db, layout_, plan.session_id, last.number);
    if (!check.ok() || !check->has_value() || (*check)->sha256 != last.sha256) {
      if (check.ok() && !check->has_value()) DiscardVersionFiles(plan, files);
      return written.error();
    }
  }
  return pruned;
}

Result<std::vector<RemovedVersion>> SqliteSessionStore::WriteClear(TurnHold&,
                                                                   const ClearPlan& plan) {
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  SqliteDb& db = lease.db();
  std::vector<RemovedVersion> removed;
  RETURN_IF_ERROR(pool_.InWriteTransaction(db, [&]() -> Status {
    // The versions' keys go with them (ON DELETE CASCADE); an earlier clear's key goes here.
    ASSIGN_OR_RETURN(removed, rows::DeleteVersions(db, plan.session_id));
    RETURN_IF_ERROR(rows::DeleteClearKeys(db, plan.session_id));
    RETURN_IF_ERROR(rows::InsertClearKey(db, plan));
    RETURN_IF_ERROR(tasks::ForgetSessionPayloads(db, plan.session_id));
    return rows::TouchSession(db, plan.session_id, plan.now_ms);
  }));
  return removed;
}

void SqliteSessionStore::DeleteRemoved(const std::string& session_id,
                                       const std::vector<RemovedVersion>& removed,
                                       bool whole_session) {
  const std::filesystem::path dir = layout_.SessionImageDir(session_id);
  for (const RemovedVersion& v : removed) {
    if (rows::IsPlainFileName(v.file)) RemoveFileQuietly(dir / v.file);
  }
  if (whole_session) ::rmdir(dir.c_str());  // only succeeds when empty
}

std::filesystem::path SqliteSessionStore::VersionPath(const std::string& session_id,
                                                      int64_t version,
                                                      const std::string& extension) const {
  return layout_.SessionImageDir(session_id) / DataDirLayout::VersionFileName(version, extension);
}

// ---------------------------------------------------------------------------------------------
// Reads

Result<SessionSnapshot> SqliteSessionStore::LoadSession(const std::string& session_id,
                                                        std::optional<int64_t> version,
                                                        bool include_history) {
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  return rows::LoadSnapshot(lease.db(), layout_, session_id, version, include_history);
}

Result<ChainStore::StoredBytes> SqliteSessionStore::LoadBytes(const VersionInfo& version) {
  const std::string& id = version.session_id;
  const std::string missing =
      "session " + id + " has no version " + std::to_string(version.version);
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  ASSIGN_OR_RETURN(std::optional<VersionInfo> row,
                   rows::LoadVersion(lease.db(), layout_, id, version.version));
  if (!row.has_value()) return MakeError(ErrorCode::kNotFound, missing);
  Result<std::string> bytes = ReadWholeFile(row->path);
  if (!bytes.ok()) {
    if (bytes.error().code != ErrorCode::kNotFound) return bytes.error();
    // Cleared or pruned between the row read and the file read?
    Result<bool> still = rows::VersionExists(lease.db(), id, version.version);
    if (still.ok() && !*still) return MakeError(ErrorCode::kNotFound, missing);
    return MakeError(ErrorCode::kDataLoss, "the image file of session " + id + " version " +
                                               std::to_string(version.version) +
                                               " is missing: " + row->path.string());
  }
  return StoredBytes{std::move(*bytes), row->sha256, row->path.string()};
}

Result<bool> SqliteSessionStore::VersionExists(const std::string& session_id, int64_t version) {
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  return rows::VersionExists(lease.db(), session_id, version);
}

Result<std::vector<ListedSession>> SqliteSessionStore::ListSessionRows(
    const std::string& principal, const std::optional<ListAfter>& after, int limit) {
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  SqliteDb& db = lease.db();
  ASSIGN_OR_RETURN(std::unique_ptr<ReadTransaction> tx, ReadTransaction::Begin(db));
  return rows::ListSessions(db, layout_, principal,
                            after.has_value() ? std::optional(after->session_id) : std::nullopt,
                            after.has_value() ? after->updated_ms : 0, limit);
}

Result<bool> SqliteSessionStore::SessionIsLive(const std::string& session_id) {
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  Result<rows::SessionRow> row = rows::LoadLiveSession(lease.db(), session_id);
  if (!row.ok() && row.error().code != ErrorCode::kNotFound) return row.error();
  return row.ok();
}

Result<std::optional<AppliedKey>> SqliteSessionStore::LoadAppliedKey(const std::string& session_id,
                                                                     const std::string& key) {
  ASSIGN_OR_RETURN(Lease lease, pool_.Acquire());
  return rows::LoadKey(lease.db(), layout_, session_id, key);
}

Result<std::unique_ptr<SessionStore>> OpenSessionStore(const StoreOptions& options,
                                                       const Clock& clock) {
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteSessionStore> store,
                   SqliteSessionStore::Open(options, clock));
  return std::unique_ptr<SessionStore>(std::move(store));
}

}  // namespace imgmcp::session::sqlite
