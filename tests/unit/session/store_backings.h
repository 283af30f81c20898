// The stores the typed SessionStore suite runs on (store_contract_test.cpp). A backing is one
// fresh, empty place to keep sessions; Open gives a SessionStore on it — call it again for a
// second store on the same data, as another process or replica would have.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/clock.h"
#include "common/result.h"
#include "session/session_store.h"
#include "session/sqlite_session_store.h"
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
    Result<std::unique_ptr<SqliteSessionStore>> store = SqliteSessionStore::Open(options, clock);
    if (!store.ok()) return store.error();
    return std::unique_ptr<SessionStore>(std::move(*store));
  }

 private:
  TempDir dir_;
};

using Backings = ::testing::Types<SqliteBacking>;

// GoogleTest names the typed instances after the backing.
struct BackingNames {
  template <typename T>
  static std::string GetName(int) {
    return T::kName;
  }
};

}  // namespace imgmcp::session::testing
