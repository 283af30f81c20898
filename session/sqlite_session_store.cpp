#include "session/sqlite_session_store.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <utility>

#include "common/log.h"
#include "common/sha256.h"
#include "session/file_io.h"
#include "session/file_lock.h"
#include "session/schema.h"
#include "session/version_rules.h"

namespace imgmcp::session {
namespace {

// Deletes every version row of a session (inside the caller's write transaction) and returns the
// files those rows named, to unlink once the transaction has committed.
Result<std::vector<std::string>> DeleteAllVersionRows(SqliteDb& db, const std::string& session_id) {
  ASSIGN_OR_RETURN(Statement sel, db.Prepare("SELECT file FROM versions WHERE session_id=?"));
  sel.Bind(1, session_id);
  std::vector<std::string> files;
  Status st = sel.ForEachRow([&](Statement& row) { files.push_back(row.ColumnText(0)); });
  if (!st.ok()) return st.error();
  ASSIGN_OR_RETURN(Statement del, db.Prepare("DELETE FROM versions WHERE session_id=?"));
  del.Bind(1, session_id);
  RETURN_IF_ERROR(del.Run());
  return files;
}

constexpr int kBusyTimeoutMs = 30000;
constexpr const char* kVersionColumns =
    "session_id, version, parent, operation, prompt, mime_type, bytes, sha256, file, width, "
    "height, backend, model, created_at, details";

struct SessionRow {
  int64_t last_version = 0;
  int64_t updated_ms = 0;
  bool expired = false;
};

// A stored file name must be one plain component we wrote ourselves.
bool IsPlainFileName(const std::string& name) {
  return !name.empty() && name[0] != '.' && name.find('/') == std::string::npos;
}

Result<std::optional<SessionRow>> LoadSession(SqliteDb& db, const std::string& id) {
  ASSIGN_OR_RETURN(
      Statement st,
      db.Prepare("SELECT last_version, updated_ms, expired FROM sessions WHERE session_id=?"));
  st.Bind(1, id);
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<SessionRow>();
  return std::optional<SessionRow>(
      SessionRow{st.ColumnInt(0), st.ColumnInt(1), st.ColumnInt(2) != 0});
}

// Live = exists and not expired.
Result<SessionRow> LoadLiveSession(SqliteDb& db, const std::string& id) {
  ASSIGN_OR_RETURN(std::optional<SessionRow> row, LoadSession(db, id));
  if (!row.has_value() || row->expired) return UnknownSessionError(id);
  return *row;
}

Result<std::vector<VersionInfo>> LoadVersions(SqliteDb& db, const DataDirLayout& layout,
                                              const std::string& where_and_order,
                                              const std::string& id,
                                              std::optional<int64_t> version) {
  ASSIGN_OR_RETURN(Statement st, db.Prepare(std::string("SELECT ") + kVersionColumns +
                                            " FROM versions WHERE " + where_and_order));
  st.Bind(1, id);
  if (version.has_value()) st.Bind(2, *version);
  std::vector<VersionInfo> out;
  RETURN_IF_ERROR(st.ForEachRow([&](Statement& row) -> Status {
    VersionInfo v;
    v.session_id = row.ColumnText(0);
    v.version = row.ColumnInt(1);
    if (!row.ColumnIsNull(2)) v.parent = row.ColumnInt(2);
    v.operation = row.ColumnText(3);
    v.prompt = row.ColumnText(4);
    v.mime_type = row.ColumnText(5);
    v.bytes = row.ColumnInt(6);
    v.sha256 = row.ColumnText(7);
    const std::string file = row.ColumnText(8);
    if (!IsPlainFileName(file)) {
      return MakeError(ErrorCode::kDataLoss, "database row for session " + id + " version " +
                                                 std::to_string(v.version) +
                                                 " names an invalid file \"" + file + "\"");
    }
    v.path = layout.SessionImageDir(id) / file;
    v.width = static_cast<int>(row.ColumnInt(9));
    v.height = static_cast<int>(row.ColumnInt(10));
    v.backend = row.ColumnText(11);
    v.model = row.ColumnText(12);
    v.created_at = row.ColumnText(13);
    v.details = row.ColumnText(14);
    out.push_back(std::move(v));
    return Status::Ok();
  }));
  return out;
}

Result<std::optional<VersionInfo>> LoadOne(SqliteDb& db, const DataDirLayout& layout,
                                           const std::string& id, std::optional<int64_t> version) {
  ASSIGN_OR_RETURN(std::vector<VersionInfo> rows,
                   version.has_value()
                       ? LoadVersions(db, layout, "session_id=?1 AND version=?2", id, version)
                       : LoadVersions(db, layout, "session_id=?1 ORDER BY version DESC LIMIT 1", id,
                                      std::nullopt));
  if (rows.empty()) return std::optional<VersionInfo>();
  return std::optional<VersionInfo>(std::move(rows.front()));
}

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

}  // namespace

// ---------------------------------------------------------------------------------------------
// EditTurn

class SqliteEditTurn final : public EditTurn {
 public:
  SqliteEditTurn(SqliteSessionStore* store, std::string session_id, TurnQueue::Ticket ticket,
                 FileLock lock, std::optional<VersionInfo> current, int64_t last_issued)
      : store_(store),
        session_id_(std::move(session_id)),
        ticket_(std::move(ticket)),
        lock_(std::move(lock)),
        current_(std::move(current)),
        last_issued_(last_issued) {}

  ~SqliteEditTurn() override {
    // The flock first, so the next in-process ticket holder finds it free at once; the ticket
    // (a member) is released after this body.
    lock_.Release();
  }

  std::optional<VersionInfo> Current() const override { return current_; }
  int64_t LastIssuedVersion() const override { return last_issued_; }

  Result<std::vector<VersionInfo>> CommitVersions(
      const std::vector<NewVersion>& versions) override {
    Result<std::vector<VersionInfo>> committed =
        store_->CommitInTurn(session_id_, last_issued_, versions);
    if (committed.ok()) {
      current_ = committed->back();
      last_issued_ = committed->back().version;
    }
    return committed;
  }

  Status Clear() override {
    Status st = store_->ClearInTurn(session_id_);
    if (st.ok()) current_.reset();
    return st;
  }

 private:
  SqliteSessionStore* store_;
  std::string session_id_;
  TurnQueue::Ticket ticket_;  // the in-process FIFO turn
  FileLock lock_;             // the cross-process turn
  std::optional<VersionInfo> current_;
  int64_t last_issued_;
};

// ---------------------------------------------------------------------------------------------
// Connections

SqliteSessionStore::Lease::~Lease() {
  if (db_ == nullptr) return;
  if (db_->InTransaction()) return;  // never pool a connection in an unknown state
  std::lock_guard lock(store_->pool_mu_);
  store_->idle_connections_.push_back(std::move(db_));
}

Result<std::unique_ptr<SqliteDb>> SqliteSessionStore::OpenConnection() {
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db,
                   SqliteDb::Open(layout_.DatabasePath(), kBusyTimeoutMs));
  RETURN_IF_ERROR(db->Exec("PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL;"));
  return db;
}

Result<SqliteSessionStore::Lease> SqliteSessionStore::Connection() {
  {
    std::lock_guard lock(pool_mu_);
    if (!idle_connections_.empty()) {
      std::unique_ptr<SqliteDb> db = std::move(idle_connections_.back());
      idle_connections_.pop_back();
      return Lease(this, std::move(db));
    }
  }
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, OpenConnection());
  return Lease(this, std::move(db));
}

// ---------------------------------------------------------------------------------------------
// Open

SqliteSessionStore::SqliteSessionStore(const StoreOptions& options, const Clock& clock)
    : options_(options), clock_(clock), layout_(options.data_dir), cache_(options.cache_bytes) {}

SqliteSessionStore::~SqliteSessionStore() = default;

int64_t SqliteSessionStore::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch())
      .count();
}

Result<std::unique_ptr<SqliteSessionStore>> SqliteSessionStore::Open(const StoreOptions& options,
                                                                     const Clock& clock) {
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
  std::unique_ptr<SqliteSessionStore> store(new SqliteSessionStore(resolved, clock));
  RETURN_IF_ERROR(store->Initialize());
  return store;
}

Status SqliteSessionStore::Initialize() {
  for (const auto& dir : {layout_.root(), layout_.ImagesDir(), layout_.LocksDir()}) {
    RETURN_IF_ERROR(EnsureDir(dir));
  }
  // Processes opening one data dir at the same moment would race on the switch to WAL (SQLite
  // answers "database is locked" at once, not after the busy timeout) and on migrations: one at a
  // time. The name starts with '.', which no session id can, so it never meets a session's lock.
  ASSIGN_OR_RETURN(FileLock acquired,
                   FileLock::Acquire(layout_.LocksDir() / ".store-open.lock", std::stop_token()));
  std::optional<FileLock> open_lock(std::move(acquired));
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db,
                   SqliteDb::Open(layout_.DatabasePath(), kBusyTimeoutMs));
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
  Status st = MigrateSchema(*db, NowMs());
  if (!st.ok()) return st;
  st = db->Exec("PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL;");
  if (!st.ok()) return st;
  {
    std::lock_guard lock(pool_mu_);
    idle_connections_.push_back(std::move(db));
  }
  open_lock.reset();  // the database is ready for everyone
  if (options_.idle_days > 0) {
    st = ExpireIdleSessions();
    if (!st.ok()) return st;
  }
  return SweepOrphans();
}

// Expires sessions idle for more than idle_days: their versions and files go, the row stays
// (expired=1) so the counter survives and a version number is never reused.
Status SqliteSessionStore::ExpireIdleSessions() {
  const int64_t cutoff = NowMs() - static_cast<int64_t>(options_.idle_days) * 86'400'000;
  ASSIGN_OR_RETURN(Lease lease, Connection());
  SqliteDb& db = lease.db();
  std::vector<std::string> idle;
  {
    ASSIGN_OR_RETURN(
        Statement st,
        db.Prepare("SELECT session_id FROM sessions WHERE expired=0 AND updated_ms < ?"));
    st.Bind(1, cutoff);
    RETURN_IF_ERROR(st.ForEachRow([&](Statement& row) { idle.push_back(row.ColumnText(0)); }));
  }
  for (const std::string& id : idle) {
    if (!IsValidSessionId(id)) continue;
    ASSIGN_OR_RETURN(std::optional<FileLock> lock,
                     FileLock::TryAcquire(layout_.SessionLockPath(id)));
    if (!lock.has_value()) continue;  // in use by another process right now: not idle
    std::vector<std::string> files;
    {
      std::lock_guard write_lock(write_mu_);
      ASSIGN_OR_RETURN(std::unique_ptr<WriteTransaction> tx, WriteTransaction::Begin(db));
      ASSIGN_OR_RETURN(std::optional<SessionRow> row, LoadSession(db, id));
      if (!row.has_value() || row->expired || row->updated_ms >= cutoff) continue;
      ASSIGN_OR_RETURN(std::vector<std::string> removed, DeleteAllVersionRows(db, id));
      files = std::move(removed);
      ASSIGN_OR_RETURN(Statement upd,
                       db.Prepare("UPDATE sessions SET expired=1 WHERE session_id=?"));
      upd.Bind(1, id);
      RETURN_IF_ERROR(upd.Run());
      RETURN_IF_ERROR(tx->Commit());
    }
    for (const std::string& f : files) {
      if (IsPlainFileName(f)) RemoveFileQuietly(layout_.SessionImageDir(id) / f);
    }
    ::rmdir(layout_.SessionImageDir(id).c_str());  // only succeeds when empty
    cache_.EraseSession(id);
    log::Info("session", "expired idle session " + id + " (" + std::to_string(files.size()) +
                             " image(s) removed)");
  }
  return Status::Ok();
}

// Deletes temp files and image files that no row refers to (left by a crash between rename and
// row commit, or between row delete and unlink). A session is swept only while holding its flock,
// so a commit in flight in another process is never mistaken for an orphan.
Status SqliteSessionStore::SweepOrphans() {
  ASSIGN_OR_RETURN(Lease lease, Connection());
  SqliteDb& db = lease.db();
  for (const auto& [name, is_dir] : ListDir(layout_.ImagesDir())) {
    if (!is_dir) {
      if (name.rfind(DataDirLayout::kTempPrefix, 0) == 0) {
        RemoveFileQuietly(layout_.ImagesDir() / name);
      }
      continue;
    }
    if (!IsValidSessionId(name)) {
      log::Warn("session",
                "ignoring unexpected directory " + (layout_.ImagesDir() / name).string());
      continue;
    }
    ASSIGN_OR_RETURN(std::optional<FileLock> lock,
                     FileLock::TryAcquire(layout_.SessionLockPath(name)));
    if (!lock.has_value()) continue;  // a turn is running in another process
    std::set<std::string> referenced;
    ASSIGN_OR_RETURN(Statement sel, db.Prepare("SELECT file FROM versions WHERE session_id=?"));
    sel.Bind(1, name);
    RETURN_IF_ERROR(sel.ForEachRow([&](Statement& row) { referenced.insert(row.ColumnText(0)); }));
    const std::filesystem::path dir = layout_.SessionImageDir(name);
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
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Turns

namespace {

class SqliteTurnReservation final : public TurnReservation {
 public:
  explicit SqliteTurnReservation(TurnQueue::Ticket ticket, std::string session_id)
      : ticket(std::move(ticket)), id(std::move(session_id)) {}
  const std::string& session_id() const override { return id; }

  TurnQueue::Ticket ticket;
  const std::string id;
};

}  // namespace

Result<std::unique_ptr<TurnReservation>> SqliteSessionStore::ReserveTurn(
    const std::string& session_id) {
  if (!IsValidSessionId(session_id)) return InvalidSessionIdError(session_id);
  return std::unique_ptr<TurnReservation>(
      new SqliteTurnReservation(turns_.Draw(session_id), session_id));
}

Result<std::unique_ptr<EditTurn>> SqliteSessionStore::AcquireTurn(const std::string& session_id,
                                                                  const TurnOptions& options) {
  auto reservation = ReserveTurn(session_id);
  if (!reservation.ok()) return reservation.error();
  return AcquireReservedTurn(std::move(*reservation), options);
}

Result<std::unique_ptr<EditTurn>> SqliteSessionStore::AcquireReservedTurn(
    std::unique_ptr<TurnReservation> reservation, const TurnOptions& options) {
  auto* reserved = dynamic_cast<SqliteTurnReservation*>(reservation.get());
  if (reserved == nullptr) {
    return MakeError(ErrorCode::kInternal, "a turn reservation from another store was used");
  }
  const std::string session_id = reserved->id;
  if (Status waited = turns_.Wait(reserved->ticket, options.cancel, options.on_queued);
      !waited.ok()) {
    return waited.error();
  }
  Result<TurnQueue::Ticket> ticket = std::move(reserved->ticket);
  ASSIGN_OR_RETURN(FileLock lock, FileLock::Acquire(layout_.SessionLockPath(session_id),
                                                    options.cancel, options.on_other_process));

  // Another process may have committed since we last looked: read the state afresh.
  ASSIGN_OR_RETURN(Lease lease, Connection());
  SqliteDb& db = lease.db();
  // A new (or expired) session gets its row from its first commit, so a turn that commits
  // nothing — a failed generate — leaves no session behind. An expired row keeps its counter.
  ASSIGN_OR_RETURN(std::optional<SessionRow> row, LoadSession(db, session_id));
  const int64_t last_issued = row.has_value() ? row->last_version : 0;
  std::optional<VersionInfo> current;
  if (row.has_value() && !row->expired) {
    ASSIGN_OR_RETURN(std::optional<VersionInfo> loaded,
                     LoadOne(db, layout_, session_id, std::nullopt));
    current = std::move(loaded);
  }
  if (options.cancel.stop_requested()) {
    return MakeError(ErrorCode::kCancelled, "cancelled before the edit started");
  }
  return std::unique_ptr<EditTurn>(new SqliteEditTurn(
      this, session_id, std::move(*ticket), std::move(lock), std::move(current), last_issued));
}

// A commit, step by step: PlanCommit (validate, number, hash) → WriteVersionFiles (durable files
// under their final names, invisible until their rows exist) → in one IMMEDIATE transaction
// UpsertRows (the session's counter, checked against the turn's, and the version rows) and
// PruneRows (retention) → after it, RemovePrunedFiles and CacheCommitted → CommittedVersions (the
// result). A crash between the steps leaves orphan files that the start-up sweep removes.
struct SqliteSessionStore::CommitPlan {
  struct Planned {
    const NewVersion* source;
    int64_t number;
    std::string file;
    std::string sha256;
  };
  std::string session_id;
  int64_t last_issued;
  std::filesystem::path dir;
  int64_t now_ms;
  std::string created_at;
  std::vector<Planned> versions;
};

Result<SqliteSessionStore::CommitPlan> SqliteSessionStore::PlanCommit(
    const std::string& session_id, int64_t last_issued, const std::vector<NewVersion>& versions) {
  RETURN_IF_ERROR(ValidateNewVersions(versions, last_issued));
  CommitPlan plan;
  plan.session_id = session_id;
  plan.last_issued = last_issued;
  plan.dir = layout_.SessionImageDir(session_id);
  plan.now_ms = NowMs();
  plan.created_at = FormatRfc3339(clock_.WallNow());
  int64_t number = last_issued;
  for (const NewVersion& nv : versions) {
    ++number;
    plan.versions.push_back({&nv, number, DataDirLayout::VersionFileName(number, nv.file_extension),
                             Sha256Hex(nv.bytes)});
  }
  return plan;
}

Status SqliteSessionStore::WriteVersionFiles(const CommitPlan& plan) {
  RETURN_IF_ERROR(EnsureDir(plan.dir));
  for (size_t i = 0; i < plan.versions.size(); ++i) {
    const CommitPlan::Planned& v = plan.versions[i];
    Status st = WriteFileDurably(plan.dir, v.file, v.source->bytes, DataDirLayout::kTempPrefix);
    if (!st.ok()) {
      for (size_t j = 0; j < i; ++j) RemoveFileQuietly(plan.dir / plan.versions[j].file);
      return st;
    }
  }
  return Status::Ok();
}

void SqliteSessionStore::DiscardVersionFiles(const CommitPlan& plan) {
  for (const CommitPlan::Planned& v : plan.versions) RemoveFileQuietly(plan.dir / v.file);
}

Status SqliteSessionStore::UpsertRows(SqliteDb& db, const CommitPlan& plan) {
  ASSIGN_OR_RETURN(std::optional<SessionRow> row, LoadSession(db, plan.session_id));
  if ((row.has_value() ? row->last_version : 0) != plan.last_issued) {
    return MakeError(ErrorCode::kInternal,
                     "session " + plan.session_id +
                         " changed outside its turn; is this data dir shared with a process "
                         "that does not take the session lock?");
  }
  // The session row first (created, or revived after expiry, by its first commit): the version
  // rows refer to it.
  ASSIGN_OR_RETURN(
      Statement upd,
      db.Prepare(
          "INSERT INTO sessions(session_id, last_version, created_ms, updated_ms) "
          "VALUES(?1,?2,?3,?3) "
          "ON CONFLICT(session_id) DO UPDATE SET last_version=?2, updated_ms=?3, expired=0"));
  upd.Bind(1, plan.session_id).Bind(2, plan.versions.back().number).Bind(3, plan.now_ms);
  RETURN_IF_ERROR(upd.Run());
  for (const CommitPlan::Planned& v : plan.versions) {
    const NewVersion& nv = *v.source;
    ASSIGN_OR_RETURN(Statement ins,
                     db.Prepare("INSERT INTO versions(session_id, version, parent, operation, "
                                "prompt, mime_type, bytes, "
                                "sha256, file, created_at, width, height, backend, model, details) "
                                "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)"));
    ins.Bind(1, plan.session_id)
        .Bind(2, v.number)
        .Bind(3, nv.parent)
        .Bind(4, nv.operation)
        .Bind(5, nv.prompt)
        .Bind(6, nv.mime_type)
        .Bind(7, static_cast<int64_t>(nv.bytes.size()))
        .Bind(8, v.sha256)
        .Bind(9, v.file)
        .Bind(10, plan.created_at)
        .Bind(11, static_cast<int64_t>(nv.width))
        .Bind(12, static_cast<int64_t>(nv.height))
        .Bind(13, nv.backend)
        .Bind(14, nv.model)
        .Bind(15, nv.details);
    RETURN_IF_ERROR(ins.Run());
  }
  return Status::Ok();
}

Result<std::vector<std::pair<int64_t, std::string>>> SqliteSessionStore::PruneRows(
    SqliteDb& db, const std::string& session_id) {
  std::vector<std::pair<int64_t, std::string>> pruned;
  if (options_.max_versions_per_session <= 0) return pruned;
  ASSIGN_OR_RETURN(
      Statement old,
      db.Prepare("SELECT version, file FROM versions WHERE session_id=? ORDER BY version DESC "
                 "LIMIT -1 OFFSET ?"));
  old.Bind(1, session_id).Bind(2, static_cast<int64_t>(options_.max_versions_per_session));
  RETURN_IF_ERROR(old.ForEachRow(
      [&](Statement& row) { pruned.emplace_back(row.ColumnInt(0), row.ColumnText(1)); }));
  if (pruned.empty()) return pruned;
  ASSIGN_OR_RETURN(Statement del,
                   db.Prepare("DELETE FROM versions WHERE session_id=? AND version<=?"));
  del.Bind(1, session_id).Bind(2, pruned.front().first);  // the newest of the pruned
  RETURN_IF_ERROR(del.Run());
  return pruned;
}

void SqliteSessionStore::RemovePrunedFiles(
    const std::string& session_id, const std::vector<std::pair<int64_t, std::string>>& pruned) {
  const std::filesystem::path dir = layout_.SessionImageDir(session_id);
  for (const auto& [version, file] : pruned) {
    cache_.Erase(session_id, version);
    if (IsPlainFileName(file)) RemoveFileQuietly(dir / file);
  }
}

void SqliteSessionStore::CacheCommitted(const CommitPlan& plan) {
  for (const CommitPlan::Planned& v : plan.versions) {
    cache_.Put(plan.session_id, v.number, std::make_shared<const std::string>(v.source->bytes),
               v.sha256);
  }
}

std::vector<VersionInfo> SqliteSessionStore::CommittedVersions(const CommitPlan& plan) {
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
    info.path = plan.dir / v.file;
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

Result<std::vector<VersionInfo>> SqliteSessionStore::CommitInTurn(
    const std::string& session_id, int64_t last_issued, const std::vector<NewVersion>& versions) {
  ASSIGN_OR_RETURN(CommitPlan plan, PlanCommit(session_id, last_issued, versions));
  RETURN_IF_ERROR(WriteVersionFiles(plan));
  Result<Lease> lease = Connection();
  if (!lease.ok()) {
    DiscardVersionFiles(plan);
    return lease.error();
  }
  SqliteDb& db = lease->db();
  std::vector<std::pair<int64_t, std::string>> pruned;
  Status result = [&]() -> Status {
    std::lock_guard write_lock(write_mu_);
    ASSIGN_OR_RETURN(std::unique_ptr<WriteTransaction> tx, WriteTransaction::Begin(db));
    RETURN_IF_ERROR(UpsertRows(db, plan));
    ASSIGN_OR_RETURN(auto pruned_rows, PruneRows(db, session_id));
    pruned = std::move(pruned_rows);
    return tx->Commit();
  }();
  if (!result.ok()) {
    // Keep the files only if the rows made it after all (a COMMIT error after the data hit disk).
    const CommitPlan::Planned& last = plan.versions.back();
    Result<std::optional<VersionInfo>> check = LoadOne(db, layout_, session_id, last.number);
    if (!check.ok() || !check->has_value() || (*check)->sha256 != last.sha256) {
      if (check.ok() && !check->has_value()) DiscardVersionFiles(plan);
      return result.error();
    }
  }
  RemovePrunedFiles(session_id, pruned);
  CacheCommitted(plan);
  return CommittedVersions(plan);
}

Status SqliteSessionStore::ClearInTurn(const std::string& session_id) {
  ASSIGN_OR_RETURN(Lease lease, Connection());
  SqliteDb& db = lease.db();
  std::vector<std::string> files;
  {
    std::lock_guard write_lock(write_mu_);
    ASSIGN_OR_RETURN(std::unique_ptr<WriteTransaction> tx, WriteTransaction::Begin(db));
    ASSIGN_OR_RETURN(std::vector<std::string> removed, DeleteAllVersionRows(db, session_id));
    files = std::move(removed);
    ASSIGN_OR_RETURN(Statement upd,
                     db.Prepare("UPDATE sessions SET updated_ms=? WHERE session_id=?"));
    upd.Bind(1, NowMs()).Bind(2, session_id);
    RETURN_IF_ERROR(upd.Run());
    RETURN_IF_ERROR(tx->Commit());
  }
  cache_.EraseSession(session_id);
  const std::filesystem::path dir = layout_.SessionImageDir(session_id);
  for (const std::string& f : files) {
    if (IsPlainFileName(f)) RemoveFileQuietly(dir / f);
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Reads

Result<VersionInfo> SqliteSessionStore::GetVersion(const std::string& session_id,
                                                   std::optional<int64_t> version) {
  if (!IsValidSessionId(session_id)) return InvalidSessionIdError(session_id);
  ASSIGN_OR_RETURN(Lease lease, Connection());
  ASSIGN_OR_RETURN(SessionRow session, LoadLiveSession(lease.db(), session_id));
  ASSIGN_OR_RETURN(std::optional<VersionInfo> v, LoadOne(lease.db(), layout_, session_id, version));
  if (!v.has_value()) return NoSuchVersionError(session_id, version, session.last_version);
  return std::move(*v);
}

Result<std::string> SqliteSessionStore::ReadImage(const VersionInfo& version) {
  const std::string& id = version.session_id;
  if (!IsValidSessionId(id)) return InvalidSessionIdError(id);
  // Cached bytes were hashed when they were committed or read, so a hit needs no rehash.
  if (auto hit = cache_.Get(id, version.version, version.sha256); hit != nullptr) return *hit;
  ASSIGN_OR_RETURN(Lease lease, Connection());
  ASSIGN_OR_RETURN(std::optional<VersionInfo> row,
                   LoadOne(lease.db(), layout_, id, version.version));
  const std::string missing =
      "session " + id + " has no version " + std::to_string(version.version);
  if (!row.has_value()) return MakeError(ErrorCode::kNotFound, missing);
  const VersionInfo& stored = *row;
  Result<std::string> bytes = ReadWholeFile(stored.path);
  if (!bytes.ok()) {
    if (bytes.error().code == ErrorCode::kNotFound) {
      // Cleared or pruned between the row read and the file read?
      Result<std::optional<VersionInfo>> again = LoadOne(lease.db(), layout_, id, version.version);
      if (again.ok() && !again->has_value()) return MakeError(ErrorCode::kNotFound, missing);
      return MakeError(ErrorCode::kDataLoss, "the image file of session " + id + " version " +
                                                 std::to_string(version.version) +
                                                 " is missing: " + stored.path.string());
    }
    return bytes.error();
  }
  const std::string sha = Sha256Hex(*bytes);
  if (sha != stored.sha256) {
    return MakeError(ErrorCode::kDataLoss, "the image file of session " + id + " version " +
                                               std::to_string(version.version) + " is corrupt (" +
                                               stored.path.string() + ": sha256 " + sha +
                                               ", recorded " + stored.sha256 + ")");
  }
  auto shared = std::make_shared<const std::string>(std::move(*bytes));
  cache_.Put(id, version.version, shared, sha);
  return *shared;
}

Result<SessionSnapshot> SqliteSessionStore::ReadSession(const std::string& session_id,
                                                        std::optional<int64_t> version,
                                                        bool include_history) {
  if (!IsValidSessionId(session_id)) return InvalidSessionIdError(session_id);
  ASSIGN_OR_RETURN(Lease lease, Connection());
  SqliteDb& db = lease.db();
  ASSIGN_OR_RETURN(std::unique_ptr<ReadTransaction> tx,
                   ReadTransaction::Begin(db));  // one snapshot
  auto read = [&]() -> Result<SessionSnapshot> {
    ASSIGN_OR_RETURN(SessionRow session, LoadLiveSession(db, session_id));
    SessionSnapshot out;
    out.last_issued_version = session.last_version;
    if (!include_history) {
      ASSIGN_OR_RETURN(std::optional<VersionInfo> one, LoadOne(db, layout_, session_id, version));
      out.version = std::move(one);
      return out;
    }
    ASSIGN_OR_RETURN(
        std::vector<VersionInfo> rows,
        LoadVersions(db, layout_, "session_id=?1 ORDER BY version", session_id, std::nullopt));
    out.history = std::move(rows);
    if (!version.has_value()) {
      if (!out.history.empty()) out.version = out.history.back();
    } else {
      for (const VersionInfo& v : out.history) {
        if (v.version == *version) out.version = v;
      }
    }
    return out;
  };
  return read();
}

Result<SessionPage> SqliteSessionStore::ListSessions(const std::optional<std::string>& cursor,
                                                     int limit) {
  limit = ClampPageSize(limit);
  int64_t after_ms = 0;
  std::string after_id;
  if (cursor.has_value() && !DecodeSessionCursor(*cursor, &after_ms, &after_id)) {
    return MakeError(ErrorCode::kInvalidArgument, "invalid cursor");
  }
  ASSIGN_OR_RETURN(Lease lease, Connection());
  SqliteDb& db = lease.db();
  ASSIGN_OR_RETURN(std::unique_ptr<ReadTransaction> tx, ReadTransaction::Begin(db));
  ASSIGN_OR_RETURN(
      Statement st,
      db.Prepare(cursor.has_value()
                     ? "SELECT session_id, updated_ms FROM sessions WHERE expired=0 AND "
                       "(updated_ms < ?1 OR (updated_ms = ?1 AND session_id < ?2)) "
                       "ORDER BY updated_ms DESC, session_id DESC LIMIT ?3"
                     : "SELECT session_id, updated_ms FROM sessions WHERE expired=0 "
                       "ORDER BY updated_ms DESC, session_id DESC LIMIT ?3"));
  if (cursor.has_value()) st.Bind(1, after_ms).Bind(2, after_id);
  st.Bind(3, static_cast<int64_t>(limit) + 1);
  std::vector<std::pair<std::string, int64_t>> ids;
  RETURN_IF_ERROR(st.ForEachRow(
      [&](Statement& row) { ids.emplace_back(row.ColumnText(0), row.ColumnInt(1)); }));
  SessionPage out;
  const bool more = ids.size() > static_cast<size_t>(limit);
  if (more) ids.resize(static_cast<size_t>(limit));
  for (const auto& [id, updated_ms] : ids) {
    if (!IsValidSessionId(id)) continue;
    ASSIGN_OR_RETURN(std::optional<VersionInfo> current, LoadOne(db, layout_, id, std::nullopt));
    SessionSummary s;
    s.session_id = id;
    s.current = std::move(current);
    s.current_version = s.current.has_value() ? s.current->version : 0;
    s.updated_at =
        FormatRfc3339(std::chrono::system_clock::time_point(std::chrono::milliseconds(updated_ms)));
    out.sessions.push_back(std::move(s));
  }
  if (more && !ids.empty()) {
    out.next_cursor = EncodeSessionCursor(ids.back().second, ids.back().first);
  }
  return out;
}

bool SqliteSessionStore::SessionExists(const std::string& session_id) {
  if (!IsValidSessionId(session_id)) return false;
  Result<Lease> lease = Connection();
  if (!lease.ok()) return false;
  return LoadLiveSession(lease->db(), session_id).ok();
}

Result<std::unique_ptr<SessionStore>> OpenSessionStore(const StoreOptions& options,
                                                       const Clock& clock) {
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteSessionStore> store,
                   SqliteSessionStore::Open(options, clock));
  return std::unique_ptr<SessionStore>(std::move(store));
}

}  // namespace imgmcp::session
