// SqliteDb's statement cache: a finished Statement goes back to its connection and is reused,
// reset and unbound, and holds no lock while it waits there.
#include "session/sqlite/sqlite_db.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace imgmcp::session {
namespace {

using testing::TempDir;

std::unique_ptr<sqlite::SqliteDb> OpenDb(const TempDir& tmp) {
  auto db = sqlite::SqliteDb::Open(tmp.path() / "t.db", 1000);
  EXPECT_TRUE(db.ok());
  EXPECT_TRUE(
      (*db)->Exec("PRAGMA journal_mode=WAL; CREATE TABLE IF NOT EXISTS t(k INTEGER, v TEXT)").ok());
  return std::move(*db);
}

TEST(SqliteDbTest, ReusedStatementsStartResetAndUnbound) {
  TempDir tmp;
  auto db = OpenDb(tmp);
  for (int k = 1; k <= 3; ++k) {
    auto ins = db->Prepare("INSERT INTO t(k, v) VALUES(?, ?)");
    ASSERT_TRUE(ins.ok());
    ins->Bind(1, int64_t{k});
    if (k != 2) ins->Bind(2, "v" + std::to_string(k));  // k=2 leaves v unbound: NULL, not "v1"
    ASSERT_TRUE(ins->Run().ok());
  }
  // Abandon a query half-way: the reused statement must start from the first row again.
  for (int round = 0; round < 2; ++round) {
    auto sel = db->Prepare("SELECT k, v FROM t ORDER BY k");
    ASSERT_TRUE(sel.ok());
    ASSERT_TRUE(*sel->Step());
    EXPECT_EQ(sel->ColumnInt(0), 1);
    EXPECT_EQ(sel->ColumnText(1), "v1");
    ASSERT_TRUE(*sel->Step());
    EXPECT_EQ(sel->ColumnInt(0), 2);
    EXPECT_TRUE(sel->ColumnIsNull(1));
  }
}

TEST(SqliteDbTest, SameSqlCheckedOutTwiceGivesTwoStatements) {
  TempDir tmp;
  auto db = OpenDb(tmp);
  ASSERT_TRUE(db->Exec("INSERT INTO t VALUES(1, 'a'), (2, 'b')").ok());
  auto outer = db->Prepare("SELECT k FROM t ORDER BY k");
  ASSERT_TRUE(outer.ok());
  ASSERT_TRUE(*outer->Step());
  {
    auto inner = db->Prepare("SELECT k FROM t ORDER BY k");
    ASSERT_TRUE(inner.ok());
    ASSERT_TRUE(*inner->Step());
    EXPECT_EQ(inner->ColumnInt(0), 1);
    ASSERT_TRUE(*inner->Step());
    EXPECT_EQ(inner->ColumnInt(0), 2);
  }
  ASSERT_TRUE(*outer->Step());  // the outer cursor was not disturbed
  EXPECT_EQ(outer->ColumnInt(0), 2);
}

TEST(SqliteDbTest, AnIdleCachedStatementHoldsNoLock) {
  TempDir tmp;
  auto reader = OpenDb(tmp);
  auto writer = OpenDb(tmp);
  ASSERT_TRUE(writer->Exec("INSERT INTO t VALUES(1, 'a')").ok());
  {
    auto sel = reader->Prepare("SELECT v FROM t WHERE k=1");
    ASSERT_TRUE(sel.ok());
    ASSERT_TRUE(*sel->Step());  // a read transaction is open while the row is current
  }
  // Back in the cache, reset: the reader sees the writer's later commit (no stale snapshot),
  // and a checkpoint can complete (no read lock pins the WAL).
  ASSERT_TRUE(writer->Exec("UPDATE t SET v='b' WHERE k=1").ok());
  {
    auto checkpoint = writer->Prepare("PRAGMA wal_checkpoint(TRUNCATE)");
    ASSERT_TRUE(checkpoint.ok());
    ASSERT_TRUE(*checkpoint->Step());
    EXPECT_EQ(checkpoint->ColumnInt(0), 0) << "the checkpoint was blocked by a reader";
  }
  auto again = reader->Prepare("SELECT v FROM t WHERE k=?");
  ASSERT_TRUE(again.ok());
  again->Bind(1, int64_t{1});
  ASSERT_TRUE(*again->Step());
  EXPECT_EQ(again->ColumnText(0), "b");
}

}  // namespace
}  // namespace imgmcp::session
