// Every SessionStore operation, single-threaded.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <stop_token>

#include "common/sha256.h"
#include "session/file_io.h"
#include "session/sqlite/file_lock.h"
#include "session/sqlite/sqlite_session_store.h"
#include "test_util.h"

namespace imgmcp::session {
namespace {

using testing::FakeClock;
using testing::MakeVersion;
using testing::ModeOf;
using testing::TempDir;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    options_.data_dir = tmp_.path();
    Reopen();
  }

  void Reopen() {
    store_.reset();
    auto opened = sqlite::SqliteSessionStore::Open(options_, clock_);
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    store_ = std::move(*opened);
  }

  // Commits `bytes` as the next version of `id` in its own turn.
  VersionInfo CommitOne(const std::string& id, const std::string& bytes,
                        const std::string& prompt = "p", const std::string& ext = ".png") {
    auto turn = store_->AcquireTurn(id, {});
    EXPECT_TRUE(turn.ok()) << turn.error().message;
    std::optional<int64_t> parent;
    if (auto cur = (*turn)->Current()) parent = cur->version;
    Result<VersionInfo> v = (*turn)->Commit(MakeVersion(bytes, parent, prompt, ext));
    EXPECT_TRUE(v.ok()) << v.error().message;
    return v.ok() ? *v : VersionInfo{};
  }

  std::set<std::string> FilesOf(const std::string& id) {
    std::set<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(tmp_.path() / "images" / id, ec)) {
      out.insert(e.path().filename().string());
    }
    return out;
  }

  TempDir tmp_;
  FakeClock clock_;
  StoreOptions options_;
  std::unique_ptr<sqlite::SqliteSessionStore> store_;
};

TEST_F(StoreTest, OpenCreatesAPrivateLayout) {
  CommitOne("s1", "bytes");
  EXPECT_EQ(ModeOf(tmp_.path() / "images"), 0700);
  EXPECT_EQ(ModeOf(tmp_.path() / "locks"), 0700);
  EXPECT_EQ(ModeOf(tmp_.path() / "images" / "s1"), 0700);
  EXPECT_EQ(ModeOf(tmp_.path() / "imgmcp.db"), 0600);
  EXPECT_EQ(ModeOf(tmp_.path() / "imgmcp.db-wal"), 0600);
  EXPECT_EQ(ModeOf(tmp_.path() / "images" / "s1" / "v1.png"), 0600);
  EXPECT_EQ(ModeOf(tmp_.path() / "locks" / "s1.lock"), 0600);
}

TEST_F(StoreTest, OpenWithoutDataDirIsInvalid) {
  FakeClock clock;
  auto r = sqlite::OpenSessionStore(StoreOptions{}, clock);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
}

// (The typed suite, store_contract_test.cpp, covers what every store does; these are SQLite's
// own: the data directory's files, the flock, the sweep, data loss on disk.)
TEST_F(StoreTest, EachVersionIsAFileInItsSessionsImageDir) {
  const VersionInfo v1 = CommitOne("s", "png-bytes");
  EXPECT_EQ(v1.path, tmp_.path() / "images" / "s" / "v1.png");
  const VersionInfo v2 = CommitOne("s", "jpeg-bytes", "second", ".jpg");
  EXPECT_EQ(v2.path, tmp_.path() / "images" / "s" / "v2.jpg");
  EXPECT_EQ(FilesOf("s"), (std::set<std::string>{"v1.png", "v2.jpg"}));
  auto turn = store_->AcquireTurn("s", {});
  ASSERT_TRUE(turn.ok());
  auto both = (*turn)->CommitVersions({MakeVersion("a", 2), MakeVersion("b", 3, "p", ".jpg")});
  ASSERT_TRUE(both.ok()) << both.error().message;
  EXPECT_EQ(FilesOf("s"), (std::set<std::string>{"v1.png", "v2.jpg", "v3.png", "v4.jpg"}));
  auto bad = (*turn)->CommitVersions({MakeVersion("c", 4), MakeVersion("", 5)});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(FilesOf("s").size(), 4u);  // nothing of the failed commit is left on disk
}
TEST_F(StoreTest, InvalidSessionIdsNeverReachThePathLayer) {
  for (const std::string& bad :
       std::vector<std::string>{"../escape", "a/b", "", ".hidden", std::string(65, 'a')}) {
    auto turn = store_->AcquireTurn(bad, {});
    ASSERT_FALSE(turn.ok()) << bad;
    EXPECT_EQ(turn.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(store_->GetVersion(bad, std::nullopt).error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(store_->History(bad).error().code, ErrorCode::kInvalidArgument);
    EXPECT_FALSE(store_->SessionExists(bad));
    VersionInfo v;
    v.session_id = bad;
    v.version = 1;
    EXPECT_EQ(store_->ReadImage(v).error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_FALSE(std::filesystem::exists(tmp_.path() / "escape"));
  EXPECT_FALSE(std::filesystem::exists(tmp_.path().parent_path() / "escape.lock"));
}

TEST_F(StoreTest, InvalidVersionsLeaveNoFiles) {
  auto turn = store_->AcquireTurn("s", {});
  ASSERT_TRUE(turn.ok());
  NewVersion empty = MakeVersion("");
  NewVersion bad_ext = MakeVersion("x", {}, "p", "/../../x");
  NewVersion bad_parent = MakeVersion("x", 5);
  NewVersion no_mime = MakeVersion("x");
  no_mime.mime_type.clear();
  for (const NewVersion* nv : {&empty, &bad_ext, &bad_parent, &no_mime}) {
    Result<VersionInfo> r = (*turn)->Commit(*nv);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ((*turn)->LastIssuedVersion(), 0);
  EXPECT_TRUE(FilesOf("s").empty());
}

TEST_F(StoreTest, AlreadyCancelledEditLeavesTheLine) {
  TurnOptions opts;
  std::stop_source cancel;
  opts.cancel = cancel.get_token();
  cancel.request_stop();
  auto turn = store_->AcquireTurn("s", opts);
  ASSERT_FALSE(turn.ok());
  EXPECT_EQ(turn.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(store_->QueuedTurns("s"), 0);
  EXPECT_TRUE(store_->AcquireTurn("s", {}).ok());  // the turn was given back
}

TEST_F(StoreTest, ClearRemovesTheFiles) {
  CommitOne("s", "1");
  CommitOne("s", "2");
  {
    auto turn = store_->AcquireTurn("s", {});
    ASSERT_TRUE(turn.ok());
    ASSERT_TRUE((*turn)->Clear().ok());
  }
  EXPECT_TRUE(FilesOf("s").empty());
  EXPECT_EQ(CommitOne("s", "3").version, 3);
  EXPECT_EQ(FilesOf("s"), (std::set<std::string>{"v3.png"}));
}
TEST_F(StoreTest, RetentionRemovesThePrunedFiles) {
  options_.max_versions_per_session = 3;
  Reopen();
  for (int i = 1; i <= 5; ++i) CommitOne("s", "bytes" + std::to_string(i));
  EXPECT_EQ(FilesOf("s"), (std::set<std::string>{"v3.png", "v4.png", "v5.png"}));
  options_.max_versions_per_session = 1;
  Reopen();
  CommitOne("s", "bytes6");
  EXPECT_EQ(FilesOf("s"), (std::set<std::string>{"v6.png"}));
}
TEST_F(StoreTest, IdleExpiryRemovesTheSessionsImageDir) {
  CommitOne("idle", "a");
  clock_.Advance(std::chrono::hours(24 * 3));
  CommitOne("busy", "c");
  options_.idle_days = 2;
  Reopen();
  EXPECT_FALSE(std::filesystem::exists(tmp_.path() / "images" / "idle"));
  EXPECT_EQ(FilesOf("busy"), (std::set<std::string>{"v1.png"}));
}
TEST_F(StoreTest, MissingImageFileIsDataLoss) {
  const VersionInfo v = CommitOne("s", "precious");
  Reopen();  // empty cache
  std::filesystem::remove(v.path);
  auto r = store_->ReadImage(v);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kDataLoss);
  EXPECT_NE(r.error().message.find("missing"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find(v.path.string()), std::string::npos);
}

TEST_F(StoreTest, AlteredImageFileIsDataLoss) {
  const VersionInfo v = CommitOne("s", "precious");
  Reopen();
  { std::ofstream(v.path, std::ios::binary | std::ios::trunc) << "tampered"; }
  auto r = store_->ReadImage(v);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kDataLoss);
  EXPECT_NE(r.error().message.find("sha256"), std::string::npos) << r.error().message;
}

TEST_F(StoreTest, ReadImageUsesTheCacheWithinItsBudget) {
  options_.cache_bytes = 10;
  Reopen();
  const VersionInfo small = CommitOne("s", "tiny");
  CommitOne("s", std::string(11, 'L'));
  EXPECT_EQ(store_->cache().EntryCount(), 1u);
  EXPECT_LE(store_->cache().SizeBytes(), 10u);
  // The cached copy answers even when the file is gone (it was verified when cached).
  std::filesystem::remove(small.path);
  EXPECT_EQ(*store_->ReadImage(small), "tiny");
}

TEST_F(StoreTest, StartupSweepRemovesOrphansAndTempFiles) {
  const VersionInfo v1 = CommitOne("s", "keep");
  const auto dir = tmp_.path() / "images" / "s";
  ASSERT_TRUE(WriteFileAtomically(dir, ".tmp-deadbeef", "half", "x").ok());
  ASSERT_TRUE(WriteFileAtomically(dir, "v2.png", "renamed-but-no-row", ".tmp-").ok());
  ASSERT_TRUE(EnsureDir(tmp_.path() / "images" / "ghost").ok());
  ASSERT_TRUE(WriteFileAtomically(tmp_.path() / "images" / "ghost", "v1.png", "x", ".tmp-").ok());
  Reopen();
  EXPECT_EQ(FilesOf("s"), (std::set<std::string>{"v1.png"}));
  EXPECT_FALSE(std::filesystem::exists(tmp_.path() / "images" / "ghost"));
  EXPECT_EQ(*store_->ReadImage(v1), "keep");
  // v2 was never issued: the counter did not move.
  EXPECT_EQ(CommitOne("s", "next").version, 2);
}

// Another process mid-commit holds the session lock: its renamed file must survive our sweep.
TEST_F(StoreTest, StartupSweepLeavesLockedSessionsAlone) {
  CommitOne("s", "keep");
  const auto dir = tmp_.path() / "images" / "s";
  ASSERT_TRUE(WriteFileAtomically(dir, "v2.png", "in-flight", ".tmp-").ok());
  {
    auto held = sqlite::FileLock::TryAcquire(tmp_.path() / "locks" / "s.lock");
    ASSERT_TRUE(held.ok() && held->has_value());
    Reopen();
    EXPECT_TRUE(std::filesystem::exists(dir / "v2.png"));
  }
  Reopen();
  EXPECT_FALSE(std::filesystem::exists(dir / "v2.png"));
}

}  // namespace
}  // namespace imgmcp::session
