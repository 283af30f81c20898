#include "session/sqlite/sqlite_pool.h"

namespace imgmcp::session::sqlite {
namespace {

constexpr int kBusyTimeoutMs = 30000;
constexpr char kConnectionPragmas[] = "PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL;";

}  // namespace

SqlitePool::Lease::~Lease() {
  if (db_ == nullptr) return;
  if (db_->InTransaction()) return;  // never pool a connection in an unknown state
  pool_->Add(std::move(db_));
}

Result<std::unique_ptr<SqliteDb>> SqlitePool::OpenUnconfigured() const {
  return SqliteDb::Open(database_, kBusyTimeoutMs);
}

Status SqlitePool::Configure(SqliteDb& db) { return db.Exec(kConnectionPragmas); }

void SqlitePool::Add(std::unique_ptr<SqliteDb> db) {
  MutexLock lock(pool_mu_);
  idle_connections_.push_back(std::move(db));
}

Result<SqlitePool::Lease> SqlitePool::Acquire() {
  {
    MutexLock lock(pool_mu_);
    if (!idle_connections_.empty()) {
      std::unique_ptr<SqliteDb> db = std::move(idle_connections_.back());
      idle_connections_.pop_back();
      return Lease(this, std::move(db));
    }
  }
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, OpenUnconfigured());
  RETURN_IF_ERROR(Configure(*db));
  return Lease(this, std::move(db));
}

Status SqlitePool::InWriteTransaction(SqliteDb& db, const std::function<Status()>& write) {
  MutexLock write_lock(write_mu_);
  ASSIGN_OR_RETURN(std::unique_ptr<WriteTransaction> tx, WriteTransaction::Begin(db));
  RETURN_IF_ERROR(write());
  return tx->Commit();
}

}  // namespace imgmcp::session::sqlite
