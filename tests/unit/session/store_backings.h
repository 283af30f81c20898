// The stores the typed SessionStore suite runs on (store_contract_test.cpp). A backing is one
// fresh, empty place to keep sessions; Open gives a SessionStore on it — call it again for a
// second store on the same data, as another process or replica would have.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/clock.h"
#include "common/result.h"
#include "pg_test_cluster.h"
#include "session/postgres/postgres_session_store.h"
#include "session/session_store.h"
#include "session/sqlite/sqlite_session_store.h"
#include "test_util.h"

namespace imgmcp::session::testing {

// A data directory of its own.
class SqliteBacking {
 public:
  static constexpr const char* kName = "Sqlite";
  // The stress tests' size: threads, and edits per thread.
  static constexpr int kStressThreads = 64;
  static constexpr int kStressEditsPerThread = 50;

  Result<std::unique_ptr<SessionStore>> Open(StoreOptions options, const Clock& clock) {
    options.data_dir = dir_.path();
    Result<std::unique_ptr<sqlite::SqliteSessionStore>> store =
        sqlite::SqliteSessionStore::Open(options, clock);
    if (!store.ok()) return store.error();
    return std::unique_ptr<SessionStore>(std::move(*store));
  }

 private:
  TempDir dir_;
};

// A database of its own on the test cluster (created per test, dropped after), and a data
// directory for the local caches of the stores opened on it.
class PostgresBacking {
 public:
  static constexpr const char* kName = "Postgres";
  static constexpr int kStressThreads = 16;
  static constexpr int kStressEditsPerThread = 10;

  PostgresBacking() {
    std::string why;
    cluster_ = PgTestCluster::Get(&why);
    if (cluster_ == nullptr) {
      ADD_FAILURE() << "no PostgreSQL for the test: " << why;
      return;
    }
    Result<std::string> db = cluster_->CreateDatabase();
    if (!db.ok()) {
      ADD_FAILURE() << db.error().message;
      return;
    }
    database_ = *db;
  }
  ~PostgresBacking() {
    if (cluster_ != nullptr && !database_.empty()) cluster_->Drop(database_);
  }

  std::string url() const { return cluster_ != nullptr ? cluster_->Url(database_) : ""; }

  Result<std::unique_ptr<SessionStore>> Open(StoreOptions options, const Clock& clock) {
    if (database_.empty()) return MakeError(ErrorCode::kUnavailable, "no test database");
    options.data_dir = dir_.path();
    postgres::PostgresStoreOptions pg;
    pg.url = url();
    pg.pool_size = 8;
    Result<std::unique_ptr<postgres::PostgresSessionStore>> store =
        postgres::PostgresSessionStore::Open(options, pg, clock);
    if (!store.ok()) return store.error();
    return std::unique_ptr<SessionStore>(std::move(*store));
  }

 private:
  PgTestCluster* cluster_ = nullptr;
  std::string database_;
  TempDir dir_;
};

using Backings = ::testing::Types<SqliteBacking, PostgresBacking>;

// GoogleTest names the typed instances after the backing.
struct BackingNames {
  template <typename T>
  static std::string GetName(int) {
    return T::kName;
  }
};

}  // namespace imgmcp::session::testing
