// Opening data dirs whose database is old, new, foreign or corrupt.
#include "session/sqlite/schema.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>

#include "common/sha256.h"
#include "session/file_io.h"
#include "session/sqlite/sqlite_session_store.h"
#include "test_util.h"

namespace imgmcp::session {
namespace {

using testing::FakeClock;
using testing::MakeVersion;
using testing::TempDir;

// Runs SQL on a database file with the raw SQLite API, independent of the code under test.
void RawExec(const std::filesystem::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

int RawSchemaVersion(const std::filesystem::path& db_path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  int v = -1;
  if (sqlite3_prepare_v2(db, "SELECT max(version) FROM schema_version", -1, &st, nullptr) ==
          SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    v = sqlite3_column_int(st, 0);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

Result<std::unique_ptr<SessionStore>> OpenAt(const std::filesystem::path& dir, const Clock& clock) {
  StoreOptions options;
  options.data_dir = dir;
  return sqlite::OpenSessionStore(options, clock);
}

TEST(SchemaTest, FreshDataDirGetsTheCurrentSchema) {
  TempDir tmp;
  FakeClock clock;
  ASSERT_TRUE(OpenAt(tmp.path(), clock).ok());
  EXPECT_EQ(RawSchemaVersion(tmp.path() / "imgmcp.db"), sqlite::kSchemaVersion);
}

// A data dir written by schema v1 (as the first release created it, by hand here) is migrated and
// its versions stay readable; numbering continues.
TEST(SchemaTest, MigratesAVersion1DataDir) {
  TempDir tmp;
  FakeClock clock;
  const auto db_path = tmp.path() / "imgmcp.db";
  const std::string bytes = "old-png-bytes";
  RawExec(db_path, R"sql(
    CREATE TABLE schema_version (version INTEGER PRIMARY KEY NOT NULL, applied_ms INTEGER NOT NULL);
    INSERT INTO schema_version VALUES (1, 0);
    CREATE TABLE sessions (session_id TEXT PRIMARY KEY NOT NULL,
      last_version INTEGER NOT NULL DEFAULT 0, created_ms INTEGER NOT NULL,
      updated_ms INTEGER NOT NULL);
    CREATE TABLE versions (session_id TEXT NOT NULL REFERENCES sessions(session_id)
      ON DELETE CASCADE, version INTEGER NOT NULL, parent INTEGER, operation TEXT NOT NULL,
      prompt TEXT NOT NULL, mime_type TEXT NOT NULL, bytes INTEGER NOT NULL,
      sha256 TEXT NOT NULL, file TEXT NOT NULL, created_at TEXT NOT NULL,
      PRIMARY KEY (session_id, version));
    INSERT INTO sessions VALUES ('old', 2, 1, 1800000000000);
    INSERT INTO versions VALUES ('old', 2, 1, 'edit', 'make it old', 'image/png', 13,
      ')sql" + Sha256Hex(bytes) +
                       R"sql(', 'v2.png', '2027-01-15T08:00:00.000Z');
  )sql");
  ASSERT_TRUE(EnsureDir(tmp.path() / "images" / "old").ok());
  ASSERT_TRUE(WriteFileAtomically(tmp.path() / "images" / "old", "v2.png", bytes, ".tmp-").ok());

  auto store = OpenAt(tmp.path(), clock);
  ASSERT_TRUE(store.ok()) << store.error().message;
  EXPECT_EQ(RawSchemaVersion(db_path), sqlite::kSchemaVersion);
  Result<VersionInfo> v = (*store)->GetVersion("old", std::nullopt);
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->version, 2);
  EXPECT_EQ(v->prompt, "make it old");
  EXPECT_EQ(v->width, 0);  // columns added by v2 get their defaults
  EXPECT_EQ(v->backend, "");
  EXPECT_EQ(v->details, "{}");  // added by v3
  EXPECT_EQ(*(*store)->ReadImage(*v), bytes);
  auto turn = (*store)->AcquireTurn("old", {});
  ASSERT_TRUE(turn.ok());
  Result<VersionInfo> next = (*turn)->Commit(MakeVersion("new", 2), IdempotencyRecord{"k", "d"});
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(next->version, 3);
  turn->reset();
  // Keys (v4) are recorded from then on.
  Result<std::optional<AppliedKey>> key = (*store)->FindAppliedKey("old", "k");
  ASSERT_TRUE(key.ok()) << key.error().message;
  ASSERT_TRUE(key->has_value());
  EXPECT_EQ((*key)->version->version, 3);
  // Tasks (v5) are kept from then on.
  NewTask task;
  task.session_id = "old";
  task.tool = "edit_image";
  Result<TaskRecord> created = (*store)->CreateTask(task);
  ASSERT_TRUE(created.ok()) << created.error().message;
  Result<std::optional<TaskRecord>> got = (*store)->GetTask(created->task_id, "");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->session_id, "old");
}

TEST(SchemaTest, RefusesANewerSchemaClearly) {
  TempDir tmp;
  FakeClock clock;
  ASSERT_TRUE(OpenAt(tmp.path(), clock).ok());
  RawExec(tmp.path() / "imgmcp.db", "INSERT INTO schema_version VALUES (99, 0)");
  auto store = OpenAt(tmp.path(), clock);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(store.error().message.find("newer"), std::string::npos) << store.error().message;
  EXPECT_NE(store.error().message.find("99"), std::string::npos) << store.error().message;
}

TEST(SchemaTest, RefusesADatabaseThatIsNotImgmcps) {
  TempDir tmp;
  FakeClock clock;
  RawExec(tmp.path() / "imgmcp.db", "CREATE TABLE other (x INTEGER)");
  auto store = OpenAt(tmp.path(), clock);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(store.error().message.find("not an imgmcp database"), std::string::npos);
}

TEST(SchemaTest, GarbageDatabaseFileIsAClearDataLossError) {
  TempDir tmp;
  FakeClock clock;
  {
    std::ofstream f(tmp.path() / "imgmcp.db", std::ios::binary);
    for (int i = 0; i < 4096; ++i) f.put(static_cast<char>((i * 7919) & 0xff));
  }
  auto store = OpenAt(tmp.path(), clock);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ErrorCode::kDataLoss);
  EXPECT_NE(store.error().message.find("corrupt"), std::string::npos) << store.error().message;
  EXPECT_NE(store.error().message.find("imgmcp.db"), std::string::npos);
}

// A real SQLite file whose pages were overwritten: the integrity check at open catches it.
TEST(SchemaTest, DamagedDatabasePagesAreAClearDataLossError) {
  TempDir tmp;
  FakeClock clock;
  {
    StoreOptions options;
    options.data_dir = tmp.path();
    auto store = sqlite::OpenSessionStore(options, clock);
    ASSERT_TRUE(store.ok());
    for (int s = 0; s < 40; ++s) {
      auto turn = (*store)->AcquireTurn("s" + std::to_string(s), {});
      ASSERT_TRUE(turn.ok());
      ASSERT_TRUE(
          (*turn)->Commit(MakeVersion(std::string(100, 'x'), {}, std::string(500, 'p'))).ok());
    }
  }
  // Fold the WAL into the main file so the damage below hits the only copy.
  RawExec(tmp.path() / "imgmcp.db", "PRAGMA wal_checkpoint(TRUNCATE)");
  const auto size = std::filesystem::file_size(tmp.path() / "imgmcp.db");
  ASSERT_GT(size, 4096u * 3);
  {
    std::fstream f(tmp.path() / "imgmcp.db", std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(4096 + 16);  // inside page 2, past its header pointer
    for (int i = 0; i < 4096 * 2 - 32; ++i) f.put(static_cast<char>(0xA5));
  }
  auto store = OpenAt(tmp.path(), clock);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ErrorCode::kDataLoss) << store.error().message;
  EXPECT_NE(store.error().message.find("imgmcp.db"), std::string::npos);
}

}  // namespace
}  // namespace imgmcp::session
