// Every SessionStore operation, single-threaded.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "common/sha256.h"
#include "session/file_io.h"
#include "session/file_lock.h"
#include "session/sqlite_session_store.h"
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
    auto opened = SqliteSessionStore::Open(options_, clock_);
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
  std::unique_ptr<SqliteSessionStore> store_;
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
  auto r = OpenSessionStore(StoreOptions{}, clock);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(StoreTest, ASessionExistsFromItsFirstCommitOnly) {
  EXPECT_FALSE(store_->SessionExists("new"));
  {
    auto turn = store_->AcquireTurn("new", {});
    ASSERT_TRUE(turn.ok());
    EXPECT_FALSE((*turn)->Current().has_value());
    EXPECT_EQ((*turn)->LastIssuedVersion(), 0);
  }
  // A turn that committed nothing (a failed generate) leaves no session behind.
  EXPECT_FALSE(store_->SessionExists("new"));
  EXPECT_EQ(store_->History("new").error().code, ErrorCode::kNotFound);
  auto page = store_->ListSessions(std::nullopt, 10);
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->sessions.empty());

  EXPECT_EQ(CommitOne("new", "1").version, 1);
  EXPECT_TRUE(store_->SessionExists("new"));
  auto history = store_->History("new");
  ASSERT_TRUE(history.ok());
  EXPECT_EQ(history->size(), 1u);
}

TEST_F(StoreTest, CommitStoresExactBytesAndMetadata) {
  const std::string prompt = "make it \"bluer\"\nüñí 🎨";
  const std::string bytes("\x89PNG\r\n\x1a\n\0\0binary", 16);
  const VersionInfo v1 = CommitOne("s", bytes, prompt);
  EXPECT_EQ(v1.version, 1);
  EXPECT_FALSE(v1.parent.has_value());
  EXPECT_EQ(v1.sha256, Sha256Hex(bytes));
  EXPECT_EQ(v1.bytes, 16);
  EXPECT_EQ(v1.path, tmp_.path() / "images" / "s" / "v1.png");
  EXPECT_TRUE(v1.path.is_absolute());
  EXPECT_EQ(*ReadWholeFile(v1.path), bytes);
  EXPECT_EQ(v1.created_at, "2027-01-15T08:00:00.000Z");

  const VersionInfo v2 = CommitOne("s", "jpeg-bytes", "second", ".jpg");
  EXPECT_EQ(v2.version, 2);
  EXPECT_EQ(v2.parent, 1);
  EXPECT_EQ(v2.path.filename(), "v2.jpg");
  EXPECT_EQ(v2.mime_type, "image/jpeg");

  Result<VersionInfo> current = store_->GetVersion("s", std::nullopt);
  ASSERT_TRUE(current.ok());
  EXPECT_EQ(current->version, 2);
  Result<VersionInfo> first = store_->GetVersion("s", 1);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->prompt, prompt);
  EXPECT_EQ(first->operation, "generate");
  EXPECT_EQ(first->width, 4);
  EXPECT_EQ(first->height, 3);
  EXPECT_EQ(first->backend, "local");
  EXPECT_EQ(first->model, "local-test");
  EXPECT_EQ(first->sha256, v1.sha256);
  EXPECT_EQ(*store_->ReadImage(*first), bytes);

  Result<std::vector<VersionInfo>> history = store_->History("s");
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].version, 1);
  EXPECT_EQ((*history)[1].version, 2);
  EXPECT_EQ((*history)[1].prompt, "second");
}

TEST_F(StoreTest, TurnSeesItsOwnCommits) {
  auto turn = store_->AcquireTurn("s", {});
  ASSERT_TRUE(turn.ok());
  ASSERT_TRUE((*turn)->Commit(MakeVersion("a")).ok());  // e.g. an import
  ASSERT_EQ((*turn)->Current()->version, 1);
  ASSERT_TRUE((*turn)->Commit(MakeVersion("b", 1)).ok());  // then the edit, same turn
  EXPECT_EQ((*turn)->Current()->version, 2);
  EXPECT_EQ((*turn)->LastIssuedVersion(), 2);
}

// details is opaque JSON text: stored exactly as given and returned by every read; "{}" when the
// commit gave none.
TEST_F(StoreTest, DetailsRoundTripExactly) {
  auto turn = store_->AcquireTurn("d", {});
  ASSERT_TRUE(turn.ok());
  NewVersion with = MakeVersion("a");
  with.details = R"({"params":{"image_size":"2K"},"turn":{"model":[{"text":"é\n","x":1}]}})";
  Result<VersionInfo> v1 = (*turn)->Commit(with);
  ASSERT_TRUE(v1.ok()) << v1.error().message;
  EXPECT_EQ(v1->details, with.details);
  Result<VersionInfo> v2 = (*turn)->Commit(MakeVersion("b", 1));
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(v2->details, "{}");
  turn->reset();

  Result<VersionInfo> read = store_->GetVersion("d", 1);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->details, with.details);
  Result<SessionSnapshot> snapshot = store_->ReadSession("d", std::nullopt, true);
  ASSERT_TRUE(snapshot.ok());
  ASSERT_EQ(snapshot->history.size(), 2u);
  EXPECT_EQ(snapshot->history[0].details, with.details);
  EXPECT_EQ(snapshot->history[1].details, "{}");
  EXPECT_EQ(snapshot->version->details, "{}");
}

TEST_F(StoreTest, UnknownSessionsAndVersionsAreNotFound) {
  EXPECT_EQ(store_->GetVersion("nope", std::nullopt).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(store_->History("nope").error().code, ErrorCode::kNotFound);
  CommitOne("s", "x");
  auto v = store_->GetVersion("s", 7);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, ErrorCode::kNotFound);
  EXPECT_NE(v.error().message.find("7"), std::string::npos);
  VersionInfo fake;
  fake.session_id = "s";
  fake.version = 9;
  EXPECT_EQ(store_->ReadImage(fake).error().code, ErrorCode::kNotFound);
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

TEST_F(StoreTest, InvalidVersionsCommitNothing) {
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

TEST_F(StoreTest, AlreadyCancelledEditGetsNoTurn) {
  TurnOptions opts;
  opts.cancel.Cancel();
  auto turn = store_->AcquireTurn("s", opts);
  ASSERT_FALSE(turn.ok());
  EXPECT_EQ(turn.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(store_->QueuedTurns("s"), 0);
  EXPECT_TRUE(store_->AcquireTurn("s", {}).ok());  // the turn was given back
}

TEST_F(StoreTest, AbandonedTurnCommitsNothing) {
  CommitOne("s", "one");
  { auto turn = store_->AcquireTurn("s", {}); }  // e.g. the backend failed
  EXPECT_EQ(store_->GetVersion("s", std::nullopt)->version, 1);
  EXPECT_EQ(CommitOne("s", "two").version, 2);
}

TEST_F(StoreTest, ClearKeepsTheCounterCounting) {
  CommitOne("s", "1");
  CommitOne("s", "2");
  const VersionInfo v3 = CommitOne("s", "3");
  {
    auto turn = store_->AcquireTurn("s", {});
    ASSERT_TRUE(turn.ok());
    ASSERT_TRUE((*turn)->Clear().ok());
    EXPECT_FALSE((*turn)->Current().has_value());
    EXPECT_EQ((*turn)->LastIssuedVersion(), 3);
  }
  EXPECT_TRUE(FilesOf("s").empty());
  EXPECT_EQ(store_->GetVersion("s", std::nullopt).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(store_->GetVersion("s", 2).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(store_->ReadImage(v3).error().code, ErrorCode::kNotFound);  // not served from cache
  EXPECT_TRUE(store_->History("s")->empty());
  EXPECT_TRUE(store_->SessionExists("s"));
  EXPECT_EQ(CommitOne("s", "4").version, 4);
  Reopen();  // the counter is durable
  {
    auto turn = store_->AcquireTurn("s", {});
    ASSERT_TRUE((*turn)->Clear().ok());
  }
  Reopen();
  EXPECT_EQ(CommitOne("s", "5").version, 5);
}

TEST_F(StoreTest, ReadSessionIsGetVersionAndHistoryInOneRead) {
  EXPECT_EQ(store_->ReadSession("nope", std::nullopt, true).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(store_->ReadSession("../x", std::nullopt, true).error().code,
            ErrorCode::kInvalidArgument);
  CommitOne("s", "1");
  const VersionInfo v2 = CommitOne("s", "2", "second");
  for (bool with_history : {true, false}) {
    SCOPED_TRACE(with_history ? "with history" : "without history");
    auto current = store_->ReadSession("s", std::nullopt, with_history);
    ASSERT_TRUE(current.ok()) << current.error().message;
    ASSERT_TRUE(current->version.has_value());
    EXPECT_EQ(current->version->version, 2);
    EXPECT_EQ(current->version->sha256, v2.sha256);
    EXPECT_EQ(current->version->prompt, "second");
    EXPECT_EQ(current->version->path, v2.path);
    EXPECT_EQ(current->history.size(), with_history ? 2u : 0u);
    EXPECT_EQ(current->last_issued_version, 2);
    auto first = store_->ReadSession("s", 1, with_history);
    ASSERT_TRUE(first.ok() && first->version.has_value());
    EXPECT_EQ(first->version->version, 1);
    auto missing = store_->ReadSession("s", 7, with_history);
    ASSERT_TRUE(missing.ok());
    EXPECT_FALSE(missing->version.has_value());
  }
  {
    auto turn = store_->AcquireTurn("s", {});
    ASSERT_TRUE((*turn)->Clear().ok());
  }
  auto cleared = store_->ReadSession("s", std::nullopt, true);
  ASSERT_TRUE(cleared.ok());
  EXPECT_FALSE(cleared->version.has_value());
  EXPECT_TRUE(cleared->history.empty());
  EXPECT_EQ(cleared->last_issued_version, 2);
}

TEST_F(StoreTest, RetentionPrunesOldestButNeverTheCurrent) {
  options_.max_versions_per_session = 3;
  Reopen();
  std::vector<VersionInfo> v;
  for (int i = 1; i <= 5; ++i) v.push_back(CommitOne("s", "bytes" + std::to_string(i)));
  auto history = store_->History("s");
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 3u);
  EXPECT_EQ((*history)[0].version, 3);
  EXPECT_EQ((*history)[2].version, 5);
  EXPECT_EQ(FilesOf("s"), (std::set<std::string>{"v3.png", "v4.png", "v5.png"}));
  EXPECT_EQ(store_->ReadImage(v[0]).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(*store_->ReadImage(v[4]), "bytes5");

  options_.max_versions_per_session = 1;
  Reopen();
  CommitOne("s", "bytes6");
  EXPECT_EQ(FilesOf("s"), (std::set<std::string>{"v6.png"}));
  EXPECT_EQ(store_->GetVersion("s", std::nullopt)->version, 6);
}

TEST_F(StoreTest, IdleSessionsExpireAtOpenWithoutReusingNumbers) {
  CommitOne("idle", "a");
  CommitOne("idle", "b");
  clock_.Advance(std::chrono::hours(24 * 3));
  CommitOne("busy", "c");
  options_.idle_days = 2;
  Reopen();
  EXPECT_FALSE(store_->SessionExists("idle"));
  EXPECT_TRUE(store_->SessionExists("busy"));
  EXPECT_FALSE(std::filesystem::exists(tmp_.path() / "images" / "idle"));
  EXPECT_EQ(store_->GetVersion("idle", 1).error().code, ErrorCode::kNotFound);
  auto page = store_->ListSessions(std::nullopt, 10);
  ASSERT_EQ(page->sessions.size(), 1u);
  EXPECT_EQ(page->sessions[0].session_id, "busy");
  {  // A turn alone does not revive it,
    auto turn = store_->AcquireTurn("idle", {});
    ASSERT_TRUE(turn.ok());
    EXPECT_FALSE((*turn)->Current().has_value());
    EXPECT_EQ((*turn)->LastIssuedVersion(), 2);
  }
  EXPECT_FALSE(store_->SessionExists("idle"));
  // and coming back to the id with a commit continues its numbering.
  EXPECT_EQ(CommitOne("idle", "d").version, 3);
  EXPECT_TRUE(store_->SessionExists("idle"));
}

TEST_F(StoreTest, ListSessionsPagesNewestActivityFirst) {
  for (int i = 0; i < 5; ++i) {
    CommitOne("s" + std::to_string(i), "x");
    clock_.Advance(std::chrono::seconds(1));
  }
  CommitOne("s1", "y");  // s1 becomes the most recent
  std::vector<std::string> seen;
  std::optional<std::string> cursor;
  int pages = 0;
  do {
    auto page = store_->ListSessions(cursor, 2);
    ASSERT_TRUE(page.ok()) << page.error().message;
    ASSERT_LE(page->sessions.size(), 2u);
    for (const auto& s : page->sessions) seen.push_back(s.session_id);
    cursor = page->next_cursor;
    ++pages;
  } while (cursor.has_value() && pages < 10);
  EXPECT_EQ(seen, (std::vector<std::string>{"s1", "s4", "s3", "s2", "s0"}));
  EXPECT_EQ(pages, 3);

  auto first = store_->ListSessions(std::nullopt, 1);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->sessions[0].current_version, 2);
  ASSERT_TRUE(first->sessions[0].current.has_value());
  EXPECT_EQ(first->sessions[0].current->sha256, Sha256Hex("y"));
  EXPECT_EQ(first->sessions[0].updated_at, "2027-01-15T08:00:05.000Z");
}

TEST_F(StoreTest, BadCursorsAreInvalidArguments) {
  CommitOne("s", "x");
  for (const std::string bad :
       {"garbage!!", "", "YWJj", "YzE6eHg6cw==", "YzE6MTo=", "YzE6MTouLi94"}) {
    auto page = store_->ListSessions(bad, 10);
    ASSERT_FALSE(page.ok()) << bad;
    EXPECT_EQ(page.error().code, ErrorCode::kInvalidArgument);
  }
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
  ASSERT_TRUE(WriteFileDurably(dir, ".tmp-deadbeef", "half", "x").ok());
  ASSERT_TRUE(WriteFileDurably(dir, "v2.png", "renamed-but-no-row", ".tmp-").ok());
  ASSERT_TRUE(EnsureDir(tmp_.path() / "images" / "ghost").ok());
  ASSERT_TRUE(WriteFileDurably(tmp_.path() / "images" / "ghost", "v1.png", "x", ".tmp-").ok());
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
  ASSERT_TRUE(WriteFileDurably(dir, "v2.png", "in-flight", ".tmp-").ok());
  {
    auto held = FileLock::TryAcquire(tmp_.path() / "locks" / "s.lock");
    ASSERT_TRUE(held.ok() && held->has_value());
    Reopen();
    EXPECT_TRUE(std::filesystem::exists(dir / "v2.png"));
  }
  Reopen();
  EXPECT_FALSE(std::filesystem::exists(dir / "v2.png"));
}

TEST_F(StoreTest, BackendSlotRunsTheFunction) {
  int ran = 0;
  store_->RunWithBackendSlot([&] { ran = store_->BackendSlotsInUse(); });
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(store_->BackendSlotsInUse(), 0);
}

}  // namespace
}  // namespace imgmcp::session
