#include "session/sqlite/sqlite_db.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "common/log.h"
#include "common/posix_io.h"
#include "common/unique_fd.h"

namespace imgmcp::session::sqlite {
namespace {

ErrorCode CodeFor(int rc) {
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return ErrorCode::kDataLoss;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return ErrorCode::kUnavailable;
    case SQLITE_FULL:
      return ErrorCode::kResourceExhausted;
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
      return ErrorCode::kPermissionDenied;
    default:
      return ErrorCode::kInternal;
  }
}

}  // namespace

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_),
      stmt_(other.stmt_),
      sql_(std::move(other.sql_)),
      bind_error_(other.bind_error_) {
  other.stmt_ = nullptr;
}

Statement::~Statement() {
  if (stmt_ == nullptr) return;
  if (sql_.empty()) {
    sqlite3_finalize(stmt_);
    return;
  }
  db_->Recycle(std::move(sql_), stmt_);
}

Statement& Statement::Bind(int index, int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK && bind_error_ == 0) bind_error_ = rc;
  return *this;
}

Statement& Statement::BindDouble(int index, double value) {
  const int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK && bind_error_ == 0) bind_error_ = rc;
  return *this;
}

Statement& Statement::Bind(int index, std::string_view value) {
  const int rc =
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK && bind_error_ == 0) bind_error_ = rc;
  return *this;
}

Statement& Statement::Bind(int index, const std::optional<int64_t>& value) {
  return value.has_value() ? Bind(index, *value) : BindNull(index);
}

Statement& Statement::BindNull(int index) {
  const int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK && bind_error_ == 0) bind_error_ = rc;
  return *this;
}

Result<bool> Statement::Step() {
  if (bind_error_ != 0) return db_->MakeSqliteError(bind_error_, "binding a parameter");
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->MakeSqliteError(rc, sqlite3_sql(stmt_));
}

Status Statement::Run() {
  return ForEachRow([](Statement&) {});
}

int64_t Statement::ColumnInt(int col) const { return sqlite3_column_int64(stmt_, col); }

double Statement::ColumnDouble(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Statement::ColumnText(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

bool Statement::ColumnIsNull(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::filesystem::path& path,
                                                 int busy_timeout_ms) {
  // Create the file ourselves so it is 0600 from the start; SQLite gives its -wal and -shm files
  // the database file's mode. (The descriptor is closed again at once.)
  if (!UniqueFd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)).valid()) {
    return MakeError(ErrorCode::kPermissionDenied,
                     "cannot open database " + path.string() + ": " + ErrnoText(errno));
  }
  // Before SQLite's first use in the process: no global allocation statistics (imgmcp reads
  // none), whose one mutex every allocation on every connection took — the HTTP workers queued
  // on it. A later call (SQLite already in use) changes nothing and is harmless.
  static std::once_flag configured;
  std::call_once(configured, [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<SqliteDb> db(new SqliteDb(raw, path));
  if (rc != SQLITE_OK) {
    Error e = raw != nullptr ? db->MakeSqliteError(rc, "opening the database")
                             : MakeError(ErrorCode::kInternal, "sqlite3_open_v2 out of memory");
    return e;
  }
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  sqlite3_extended_result_codes(raw, 1);
  return db;
}

SqliteDb::~SqliteDb() {
  for (auto& [sql, stmt] : idle_statements_) sqlite3_finalize(stmt);
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

void SqliteDb::Recycle(std::string sql, sqlite3_stmt* stmt) {
  // Reset ends the statement's read (or write) so it holds no lock while idle.
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  auto [it, inserted] = idle_statements_.try_emplace(std::move(sql), stmt);
  if (!inserted) sqlite3_finalize(stmt);
}

Status SqliteDb::Exec(std::string_view sql) {
  char* msg = nullptr;
  const std::string text(sql);
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &msg);
  if (msg != nullptr) sqlite3_free(msg);
  if (rc != SQLITE_OK) return MakeSqliteError(rc, text);
  return Status::Ok();
}

Status SqliteDb::Run(std::string_view sql) {
  ASSIGN_OR_RETURN(Statement st, Prepare(sql));
  return st.Run();
}

Result<Statement> SqliteDb::Prepare(std::string_view sql) {
  std::string key(sql);
  if (auto it = idle_statements_.find(key); it != idle_statements_.end()) {
    sqlite3_stmt* stmt = it->second;
    idle_statements_.erase(it);
    return Statement(this, stmt, std::move(key));
  }
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    if (stmt != nullptr) sqlite3_finalize(stmt);
    return MakeSqliteError(rc, sql);
  }
  // A text holding more than one statement, or only a comment, is not worth keeping.
  if (stmt == nullptr) key.clear();
  return Statement(this, stmt, std::move(key));
}

bool SqliteDb::InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

Error SqliteDb::MakeSqliteError(int rc, std::string_view what) const {
  const ErrorCode code = CodeFor(rc);
  std::string message;
  if (code == ErrorCode::kDataLoss) {
    message = "database " + path_.string() + " is corrupt or not an imgmcp database (" +
              sqlite3_errstr(rc) + ")";
  } else {
    message = "database " + path_.string() + ": " + sqlite3_errmsg(db_) + " (while " +
              std::string(what.substr(0, 120)) + ")";
  }
  return Error(code, std::move(message));
}

Result<std::unique_ptr<ReadTransaction>> ReadTransaction::Begin(SqliteDb& db) {
  RETURN_IF_ERROR(db.Run("BEGIN"));
  return std::unique_ptr<ReadTransaction>(new ReadTransaction(db));
}

ReadTransaction::~ReadTransaction() {
  if (!db_.InTransaction()) return;
  Status st = db_.Run("COMMIT");
  if (!st.ok()) log::Warn("session", "ending a read transaction failed: " + st.error().message);
}

Result<std::unique_ptr<WriteTransaction>> WriteTransaction::Begin(SqliteDb& db) {
  RETURN_IF_ERROR(db.Run("BEGIN IMMEDIATE"));
  return std::unique_ptr<WriteTransaction>(new WriteTransaction(db));
}

WriteTransaction::~WriteTransaction() {
  if (!done_ && db_.InTransaction()) {
    Status st = db_.Run("ROLLBACK");
    if (!st.ok()) log::Warn("session", "rollback failed: " + st.error().message);
  }
}

Status WriteTransaction::Commit() {
  Status st = db_.Run("COMMIT");
  if (st.ok()) done_ = true;
  return st;
}

}  // namespace imgmcp::session::sqlite
