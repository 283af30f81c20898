// SqlitePool: the embedded store's connections to its database file — a pool of idle ones, each
// opened with the store's pragmas — and the order of this process's write transactions. Shared by
// SqliteSessionStore and its task rows (sqlite_tasks.h). Thread-safe.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/thread_annotations.h"
#include "session/sqlite/sqlite_db.h"

namespace imgmcp::session::sqlite {

class SqlitePool {
 public:
  explicit SqlitePool(std::filesystem::path database) : database_(std::move(database)) {}
  SqlitePool(const SqlitePool&) = delete;
  SqlitePool& operator=(const SqlitePool&) = delete;

  // A pooled connection, handed back to the pool when the lease ends (unless a transaction is
  // still open on it: a connection in an unknown state is closed instead).
  class Lease {
   public:
    Lease(SqlitePool* pool, std::unique_ptr<SqliteDb> db) : pool_(pool), db_(std::move(db)) {}
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    SqliteDb& db() { return *db_; }

   private:
    SqlitePool* pool_;
    std::unique_ptr<SqliteDb> db_;
  };

  // An idle connection, or a new one.
  Result<Lease> Acquire();
  // Opens the file with the busy timeout only (the first connection, which sets the database
  // up); Configure adds what every pooled connection has (foreign keys, synchronous=FULL).
  Result<std::unique_ptr<SqliteDb>> OpenUnconfigured() const;
  static Status Configure(SqliteDb& db);
  // Gives a connection (configured) to the pool.
  void Add(std::unique_ptr<SqliteDb> db);

  // Runs `write` inside one IMMEDIATE transaction on `db`, in this process's write order.
  Status InWriteTransaction(SqliteDb& db, const std::function<Status()>& write);

 private:
  const std::filesystem::path database_;

  // Serialises this process's SQLite write transactions: in-process writers wait here and are
  // woken at once, instead of polling in SQLite's busy handler (which sleeps in growing steps).
  // Other processes are still held off by SQLite's own lock and busy_timeout. Guards no data.
  Mutex write_mu_;

  Mutex pool_mu_;  // guards idle_connections_
  std::vector<std::unique_ptr<SqliteDb>> idle_connections_ GUARDED_BY(pool_mu_);
};

}  // namespace imgmcp::session::sqlite
