// A thin RAII wrapper over one SQLite connection and its prepared statements. Errors become
// Result/Status with a code that says what went wrong (corrupt file → kDataLoss, busy →
// kUnavailable). A SqliteDb is not thread-safe: one thread uses it at a time (the store pools
// connections). Prepared statements are kept per connection and reused: a finished Statement is
// reset and goes back to its connection's cache instead of being compiled again next time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include "common/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace imgmcp::session::sqlite {

class SqliteDb;

class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  ~Statement();

  // Parameters are 1-based, as in SQLite.
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, std::string_view value);
  Statement& Bind(int index, const char* value) { return Bind(index, std::string_view(value)); }
  Statement& Bind(int index, const std::optional<int64_t>& value);
  Statement& BindNull(int index);
  Statement& BindDouble(int index, double value);  // not Bind: an int argument would be ambiguous

  // true: a row is available; false: done. The first bind error, if any, is reported here.
  Result<bool> Step();
  // Steps until done (for statements without result rows).
  Status Run();
  // Steps through every row, calling fn(*this) for each; fn returns void, or a Status that stops
  // the loop (and is returned) when it is an error. The one row loop of this code base.
  template <typename Fn>
  Status ForEachRow(Fn&& fn);

  int64_t ColumnInt(int col) const;
  double ColumnDouble(int col) const;
  std::string ColumnText(int col) const;
  bool ColumnIsNull(int col) const;

 private:
  friend class SqliteDb;
  Statement(SqliteDb* db, sqlite3_stmt* stmt, std::string sql)
      : db_(db), stmt_(stmt), sql_(std::move(sql)) {}

  SqliteDb* db_;
  sqlite3_stmt* stmt_;
  std::string sql_;     // the cache key; empty for statements that are not cached
  int bind_error_ = 0;  // first failing sqlite3_bind_* code
};

class SqliteDb {
 public:
  // Opens (creating if missing) the database file. Sets busy_timeout first so that every later
  // statement waits for other processes' locks instead of failing with SQLITE_BUSY.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::filesystem::path& path,
                                                int busy_timeout_ms);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs one or more statements, parsed each time (set-up, migrations).
  Status Exec(std::string_view sql);
  Result<Statement> Prepare(std::string_view sql);
  // Runs one statement without parameters or rows through the statement cache (transaction
  // control: parsed once per connection, not per transaction).
  Status Run(std::string_view sql);

  // An error for SQLite result `rc` in the context of `what`, with the connection's message.
  Error MakeSqliteError(int rc, std::string_view what) const;
  const std::filesystem::path& path() const { return path_; }
  // True while an explicit transaction is open on this connection.
  bool InTransaction() const;

 private:
  friend class Statement;
  SqliteDb(sqlite3* db, std::filesystem::path path) : db_(db), path_(std::move(path)) {}
  // Takes back a finished statement (reset, bindings cleared); finalizes it when one for the
  // same SQL is already cached.
  void Recycle(std::string sql, sqlite3_stmt* stmt);

  sqlite3* db_;
  std::filesystem::path path_;
  // Idle prepared statements by SQL text. Only the thread using the connection touches it.
  std::unordered_map<std::string, sqlite3_stmt*> idle_statements_;
};

template <typename Fn>
Status Statement::ForEachRow(Fn&& fn) {
  while (true) {
    ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::Ok();
    if constexpr (std::is_void_v<std::invoke_result_t<Fn&, Statement&>>) {
      fn(*this);
    } else {
      RETURN_IF_ERROR(fn(*this));
    }
  }
}

// BEGIN … COMMIT around reads: every statement in between sees one snapshot of the database, so a
// commit by another connection lands wholly before or wholly after them. Ends (COMMIT; nothing
// was written) when destroyed.
class ReadTransaction {
 public:
  static Result<std::unique_ptr<ReadTransaction>> Begin(SqliteDb& db);
  ~ReadTransaction();

 private:
  explicit ReadTransaction(SqliteDb& db) : db_(db) {}
  SqliteDb& db_;
};

// BEGIN IMMEDIATE … COMMIT; rolls back when destroyed uncommitted. IMMEDIATE takes the write lock
// up front, so a writer never fails half-way with SQLITE_BUSY_SNAPSHOT under WAL.
class WriteTransaction {
 public:
  static Result<std::unique_ptr<WriteTransaction>> Begin(SqliteDb& db);
  ~WriteTransaction();
  Status Commit();

 private:
  explicit WriteTransaction(SqliteDb& db) : db_(db) {}
  SqliteDb& db_;
  bool done_ = false;
};

}  // namespace imgmcp::session::sqlite
