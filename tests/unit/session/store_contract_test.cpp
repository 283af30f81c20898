// The typed SessionStore suite: what every store implementation must do, single-threaded —
// numbering, exact bytes and metadata, several versions in one commit, conflicts with what is
// not an earlier version, reset (clear) and revert, retention, idle expiry, snapshot reads,
// paging, and that a failed or abandoned commit commits nothing. Threads are in
// store_contract_concurrency_test.cpp. Store-specific behaviour (files, locks, schema, data loss
// on disk) is tested beside each store.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <stop_token>

#include "common/sha256.h"
#include "session/file_io.h"
#include "session/idempotency.h"
#include "store_backings.h"
#include "test_util.h"

namespace imgmcp::session {
namespace {

using testing::FakeClock;
using testing::MakeVersion;

template <typename Backing>
class StoreContractTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  std::unique_ptr<SessionStore> Open() {
    Result<std::unique_ptr<SessionStore>> opened = backing_.Open(options_, clock_);
    EXPECT_TRUE(opened.ok()) << opened.error().message;
    return opened.ok() ? std::move(*opened) : nullptr;
  }

  // A new store on the same data (the old one is closed first), as after a restart.
  void Reopen() {
    store_.reset();
    store_ = Open();
    ASSERT_NE(store_, nullptr);
  }

  // Commits `bytes` as the next version of `id` in its own turn (parent: the current version).
  VersionInfo CommitOne(const std::string& id, const std::string& bytes,
                        const std::string& prompt = "p", const std::string& ext = ".png") {
    auto turn = store_->AcquireTurn(id, {});
    EXPECT_TRUE(turn.ok()) << turn.error().message;
    if (!turn.ok()) return {};
    std::optional<int64_t> parent;
    if (auto cur = (*turn)->Current()) parent = cur->version;
    Result<VersionInfo> v = (*turn)->Commit(MakeVersion(bytes, parent, prompt, ext));
    EXPECT_TRUE(v.ok()) << v.error().message;
    return v.ok() ? *v : VersionInfo{};
  }

  // Commits `bytes` as the next version of `id` in its own turn, recording `key` with it.
  Result<VersionInfo> CommitKeyed(const std::string& id, const std::string& bytes,
                                  const std::string& key, const std::string& digest = "d1") {
    auto turn = store_->AcquireTurn(id, {});
    if (!turn.ok()) return turn.error();
    std::optional<int64_t> parent;
    if (auto cur = (*turn)->Current()) parent = cur->version;
    return (*turn)->Commit(MakeVersion(bytes, parent), IdempotencyRecord{key, digest});
  }

  std::vector<int64_t> VersionsOf(const std::string& id) {
    std::vector<int64_t> out;
    auto history = store_->History(id);
    EXPECT_TRUE(history.ok()) << history.error().message;
    if (history.ok()) {
      for (const VersionInfo& v : *history) out.push_back(v.version);
    }
    return out;
  }

  Backing backing_;  // destroyed after the stores below
  FakeClock clock_;
  StoreOptions options_;
  std::unique_ptr<SessionStore> store_;
};

TYPED_TEST_SUITE(StoreContractTest, testing::Backings, testing::BackingNames);

TYPED_TEST(StoreContractTest, ASessionExistsFromItsFirstCommitOnly) {
  SessionStore& store = *this->store_;
  EXPECT_FALSE(store.SessionExists("new"));
  {
    auto turn = store.AcquireTurn("new", {});
    ASSERT_TRUE(turn.ok()) << turn.error().message;
    EXPECT_FALSE((*turn)->Current().has_value());
    EXPECT_EQ((*turn)->LastIssuedVersion(), 0);
  }
  // A turn that committed nothing (a failed generate) leaves no session behind.
  EXPECT_FALSE(store.SessionExists("new"));
  EXPECT_EQ(store.History("new").error().code, ErrorCode::kNotFound);
  auto page = store.ListSessions(std::nullopt, 10);
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->sessions.empty());

  EXPECT_EQ(this->CommitOne("new", "1").version, 1);
  EXPECT_TRUE(store.SessionExists("new"));
  EXPECT_EQ(this->VersionsOf("new"), (std::vector<int64_t>{1}));
}

TYPED_TEST(StoreContractTest, CommitStoresExactBytesAndMetadata) {
  SessionStore& store = *this->store_;
  const std::string prompt = "make it \"bluer\"\nüñí 🎨 '; DROP TABLE versions; --";
  const std::string bytes("\x89PNG\r\n\x1a\n\0\0binary\xff\xfe", 18);
  const VersionInfo v1 = this->CommitOne("s", bytes, prompt);
  EXPECT_EQ(v1.version, 1);
  EXPECT_FALSE(v1.parent.has_value());
  EXPECT_EQ(v1.sha256, Sha256Hex(bytes));
  EXPECT_EQ(v1.bytes, 18);
  EXPECT_EQ(v1.prompt, prompt);
  EXPECT_TRUE(v1.path.is_absolute()) << v1.path;
  EXPECT_EQ(v1.path.extension(), ".png");
  EXPECT_EQ(*ReadWholeFile(v1.path), bytes);  // `path` holds exactly the bytes
  EXPECT_EQ(v1.created_at, "2027-01-15T08:00:00.000Z");

  const VersionInfo v2 = this->CommitOne("s", "jpeg-bytes", "second", ".jpg");
  EXPECT_EQ(v2.version, 2);
  EXPECT_EQ(v2.parent, 1);
  EXPECT_EQ(v2.path.extension(), ".jpg");
  EXPECT_EQ(v2.mime_type, "image/jpeg");

  Result<VersionInfo> current = store.GetVersion("s", std::nullopt);
  ASSERT_TRUE(current.ok()) << current.error().message;
  EXPECT_EQ(current->version, 2);
  EXPECT_EQ(*ReadWholeFile(current->path), "jpeg-bytes");
  Result<VersionInfo> first = store.GetVersion("s", 1);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->prompt, prompt);
  EXPECT_EQ(first->operation, "generate");
  EXPECT_EQ(first->mime_type, "image/png");
  EXPECT_EQ(first->width, 4);
  EXPECT_EQ(first->height, 3);
  EXPECT_EQ(first->backend, "local");
  EXPECT_EQ(first->model, "local-test");
  EXPECT_EQ(first->bytes, 18);
  EXPECT_EQ(first->sha256, v1.sha256);
  EXPECT_EQ(first->created_at, v1.created_at);
  EXPECT_EQ(*store.ReadImage(*first), bytes);
  EXPECT_EQ(*ReadWholeFile(first->path), bytes);

  this->Reopen();  // durable, and read back without any cache
  Result<std::vector<VersionInfo>> history = this->store_->History("s");
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].version, 1);
  EXPECT_EQ((*history)[0].prompt, prompt);
  EXPECT_EQ((*history)[1].version, 2);
  EXPECT_EQ((*history)[1].prompt, "second");
  EXPECT_EQ((*history)[1].parent, 1);
  EXPECT_EQ(*this->store_->ReadImage((*history)[0]), bytes);
  EXPECT_EQ(*this->store_->ReadImage((*history)[1]), "jpeg-bytes");
}

// details is opaque JSON text: stored exactly as given and returned by every read (also after a
// restart, and in the commit of several versions); "{}" when the commit gave none.
TYPED_TEST(StoreContractTest, DetailsRoundTripExactly) {
  auto turn = this->store_->AcquireTurn("d", {});
  ASSERT_TRUE(turn.ok());
  NewVersion with = MakeVersion("a");
  with.details = R"({"params":{"image_size":"2K"},"turn":{"model":[{"text":"é\n'\"","x":1}]}})";
  Result<VersionInfo> v1 = (*turn)->Commit(with);
  ASSERT_TRUE(v1.ok()) << v1.error().message;
  EXPECT_EQ(v1->details, with.details);
  NewVersion other = MakeVersion("c", 2);
  other.details = R"({"n":3})";
  Result<std::vector<VersionInfo>> v23 = (*turn)->CommitVersions({MakeVersion("b", 1), other});
  ASSERT_TRUE(v23.ok()) << v23.error().message;
  EXPECT_EQ((*v23)[0].details, "{}");
  EXPECT_EQ((*v23)[1].details, other.details);
  turn->reset();

  this->Reopen();
  SessionStore& store = *this->store_;
  Result<VersionInfo> read = store.GetVersion("d", 1);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->details, with.details);
  Result<SessionSnapshot> snapshot = store.ReadSession("d", std::nullopt, true);
  ASSERT_TRUE(snapshot.ok());
  ASSERT_EQ(snapshot->history.size(), 3u);
  EXPECT_EQ(snapshot->history[0].details, with.details);
  EXPECT_EQ(snapshot->history[1].details, "{}");
  EXPECT_EQ(snapshot->history[2].details, other.details);
  EXPECT_EQ(snapshot->version->details, other.details);
  auto page = store.ListSessions(std::nullopt, 10);
  ASSERT_TRUE(page.ok());
  ASSERT_TRUE(page->sessions[0].current.has_value());
  EXPECT_EQ(page->sessions[0].current->details, other.details);
}

TYPED_TEST(StoreContractTest, TurnSeesItsOwnCommits) {
  auto turn = this->store_->AcquireTurn("s", {});
  ASSERT_TRUE(turn.ok());
  ASSERT_TRUE((*turn)->Commit(MakeVersion("a")).ok());  // e.g. an import
  ASSERT_EQ((*turn)->Current()->version, 1);
  ASSERT_TRUE((*turn)->Commit(MakeVersion("b", 1)).ok());  // then the edit, same turn
  EXPECT_EQ((*turn)->Current()->version, 2);
  EXPECT_EQ((*turn)->LastIssuedVersion(), 2);
}

// An import and the edit made from it: one commit, consecutive numbers, the edit's parent the
// import.
TYPED_TEST(StoreContractTest, SeveralVersionsCommitTogether) {
  this->CommitOne("s", "before");
  auto turn = this->store_->AcquireTurn("s", {});
  ASSERT_TRUE(turn.ok());
  NewVersion import = MakeVersion("imported", std::nullopt, "");
  import.operation = "import";
  Result<std::vector<VersionInfo>> committed =
      (*turn)->CommitVersions({import, MakeVersion("edited", 2, "make it red")});
  ASSERT_TRUE(committed.ok()) << committed.error().message;
  ASSERT_EQ(committed->size(), 2u);
  EXPECT_EQ((*committed)[0].version, 2);
  EXPECT_EQ((*committed)[0].operation, "import");
  EXPECT_FALSE((*committed)[0].parent.has_value());
  EXPECT_EQ((*committed)[1].version, 3);
  EXPECT_EQ((*committed)[1].parent, 2);
  EXPECT_EQ(*ReadWholeFile((*committed)[0].path), "imported");
  EXPECT_EQ(*ReadWholeFile((*committed)[1].path), "edited");
  EXPECT_EQ((*turn)->Current()->version, 3);
  EXPECT_EQ((*turn)->LastIssuedVersion(), 3);
  turn->reset();
  EXPECT_EQ(this->VersionsOf("s"), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(*this->store_->ReadImage(*this->store_->GetVersion("s", 2)), "imported");
  EXPECT_EQ(this->store_->GetVersion("s", std::nullopt)->prompt, "make it red");
}

// A list with one bad version commits none of them, and the numbers are not used up.
TYPED_TEST(StoreContractTest, SeveralVersionsCommitAllOrNothing) {
  this->CommitOne("s", "one");
  auto turn = this->store_->AcquireTurn("s", {});
  ASSERT_TRUE(turn.ok());
  NewVersion no_bytes = MakeVersion("", 2);
  NewVersion forward_parent = MakeVersion("x", 3);  // itself, not an earlier version
  for (const NewVersion* bad : {&no_bytes, &forward_parent}) {
    Result<std::vector<VersionInfo>> r = (*turn)->CommitVersions({MakeVersion("ok", 1), *bad});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message.find("version 3"), std::string::npos) << r.error().message;
  }
  Result<std::vector<VersionInfo>> empty = (*turn)->CommitVersions({});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ((*turn)->LastIssuedVersion(), 1);
  EXPECT_EQ((*turn)->Current()->version, 1);
  turn->reset();
  EXPECT_EQ(this->VersionsOf("s"), (std::vector<int64_t>{1}));
  EXPECT_EQ(this->store_->GetVersion("s", 2).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(this->CommitOne("s", "two").version, 2);
}

TYPED_TEST(StoreContractTest, UnknownSessionsAndVersionsAreNotFound) {
  SessionStore& store = *this->store_;
  EXPECT_EQ(store.GetVersion("nope", std::nullopt).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(store.History("nope").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(store.ReadSession("nope", std::nullopt, false).error().code, ErrorCode::kNotFound);
  this->CommitOne("s", "x");
  auto v = store.GetVersion("s", 7);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, ErrorCode::kNotFound);
  EXPECT_NE(v.error().message.find("7"), std::string::npos);
  VersionInfo fake;
  fake.session_id = "s";
  fake.version = 9;
  EXPECT_EQ(store.ReadImage(fake).error().code, ErrorCode::kNotFound);
  fake.session_id = "nope";
  fake.version = 1;
  EXPECT_EQ(store.ReadImage(fake).error().code, ErrorCode::kNotFound);
}

TYPED_TEST(StoreContractTest, InvalidSessionIdsAreInvalidArguments) {
  SessionStore& store = *this->store_;
  for (const std::string& bad :
       std::vector<std::string>{"../escape", "a/b", "", ".hidden", std::string(65, 'a'), "x'y"}) {
    SCOPED_TRACE(bad);
    auto turn = store.AcquireTurn(bad, {});
    ASSERT_FALSE(turn.ok());
    EXPECT_EQ(turn.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(store.ReserveTurn(bad).error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(store.GetVersion(bad, std::nullopt).error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(store.History(bad).error().code, ErrorCode::kInvalidArgument);
    EXPECT_FALSE(store.SessionExists(bad));
    VersionInfo v;
    v.session_id = bad;
    v.version = 1;
    EXPECT_EQ(store.ReadImage(v).error().code, ErrorCode::kInvalidArgument);
  }
}

TYPED_TEST(StoreContractTest, InvalidVersionsCommitNothing) {
  auto turn = this->store_->AcquireTurn("s", {});
  ASSERT_TRUE(turn.ok());
  NewVersion empty = MakeVersion("");
  NewVersion bad_ext = MakeVersion("x", {}, "p", "/../../x");
  NewVersion bad_parent = MakeVersion("x", 5);
  NewVersion zero_parent = MakeVersion("x", 0);
  NewVersion no_mime = MakeVersion("x");
  no_mime.mime_type.clear();
  NewVersion no_operation = MakeVersion("x");
  no_operation.operation.clear();
  NewVersion nul_prompt = MakeVersion("x", {}, std::string("keep\0 this", 10));
  for (const NewVersion* nv :
       {&empty, &bad_ext, &bad_parent, &zero_parent, &no_mime, &no_operation, &nul_prompt}) {
    Result<VersionInfo> r = (*turn)->Commit(*nv);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ((*turn)->LastIssuedVersion(), 0);
  turn->reset();
  EXPECT_FALSE(this->store_->SessionExists("s"));
  EXPECT_EQ(this->CommitOne("s", "good").version, 1);
}

TYPED_TEST(StoreContractTest, AlreadyCancelledEditGetsNoTurn) {
  TurnOptions opts;
  std::stop_source cancel;
  opts.cancel = cancel.get_token();
  cancel.request_stop();
  auto turn = this->store_->AcquireTurn("s", opts);
  ASSERT_FALSE(turn.ok());
  EXPECT_EQ(turn.error().code, ErrorCode::kCancelled);
  EXPECT_TRUE(this->store_->AcquireTurn("s", {}).ok());  // the turn was given back
}

TYPED_TEST(StoreContractTest, AbandonedTurnCommitsNothing) {
  this->CommitOne("s", "one");
  { auto turn = this->store_->AcquireTurn("s", {}); }  // e.g. the backend failed
  EXPECT_EQ(this->store_->GetVersion("s", std::nullopt)->version, 1);
  EXPECT_EQ(this->CommitOne("s", "two").version, 2);
}

TYPED_TEST(StoreContractTest, ClearKeepsTheCounterCounting) {
  this->CommitOne("s", "1");
  this->CommitOne("s", "2");
  const VersionInfo v3 = this->CommitOne("s", "3");
  ASSERT_TRUE(this->store_->ReadImage(v3).ok());  // cached now, if the store caches
  {
    auto turn = this->store_->AcquireTurn("s", {});
    ASSERT_TRUE(turn.ok());
    ASSERT_TRUE((*turn)->Clear().ok());
    EXPECT_FALSE((*turn)->Current().has_value());
    EXPECT_EQ((*turn)->LastIssuedVersion(), 3);
  }
  SessionStore& store = *this->store_;
  EXPECT_EQ(store.GetVersion("s", std::nullopt).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(store.GetVersion("s", 2).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(store.ReadImage(v3).error().code, ErrorCode::kNotFound);  // not served from a cache
  EXPECT_TRUE(store.History("s")->empty());
  EXPECT_TRUE(store.SessionExists("s"));
  EXPECT_EQ(this->CommitOne("s", "4").version, 4);
  this->Reopen();  // the counter is durable
  {
    auto turn = this->store_->AcquireTurn("s", {});
    ASSERT_TRUE((*turn)->Clear().ok());
  }
  this->Reopen();
  EXPECT_EQ(this->CommitOne("s", "5").version, 5);
}

// A revert commits an earlier version's bytes again as a new version; it stays readable when the
// version it came from is pruned (a store that keeps one copy of equal bytes must not lose it).
TYPED_TEST(StoreContractTest, RevertIsANewVersionThatOutlivesItsSource) {
  this->options_.max_versions_per_session = 3;
  this->Reopen();
  const VersionInfo v1 = this->CommitOne("s", "original");
  this->CommitOne("s", "edited");
  VersionInfo reverted;
  {
    auto turn = this->store_->AcquireTurn("s", {});
    ASSERT_TRUE(turn.ok());
    auto old = this->store_->GetVersion("s", 1);
    ASSERT_TRUE(old.ok());
    auto bytes = this->store_->ReadImage(*old);
    ASSERT_TRUE(bytes.ok());
    NewVersion nv = MakeVersion(*bytes, 1, "revert to version 1");
    nv.operation = "revert";
    auto v = (*turn)->Commit(nv);
    ASSERT_TRUE(v.ok()) << v.error().message;
    reverted = *v;
  }
  EXPECT_EQ(reverted.version, 3);
  EXPECT_EQ(reverted.parent, 1);
  EXPECT_EQ(reverted.sha256, v1.sha256);
  this->CommitOne("s", "later");     // v4: prunes v1
  this->CommitOne("s", "original");  // v5: the same bytes once more
  EXPECT_EQ(this->VersionsOf("s"), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(this->store_->ReadImage(v1).error().code, ErrorCode::kNotFound);
  this->Reopen();
  auto again = this->store_->GetVersion("s", 3);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->operation, "revert");
  EXPECT_EQ(*this->store_->ReadImage(*again), "original");
  EXPECT_EQ(*ReadWholeFile(again->path), "original");
  this->CommitOne("s", "x");  // v6: prunes v3; v5 still has the bytes
  this->CommitOne("s", "y");  // v7: prunes v4
  this->CommitOne("s", "z");  // v8: prunes v5
  EXPECT_EQ(this->VersionsOf("s"), (std::vector<int64_t>{6, 7, 8}));
  EXPECT_EQ(*this->store_->ReadImage(*this->store_->GetVersion("s", 6)), "x");
}

TYPED_TEST(StoreContractTest, ReadSessionIsGetVersionAndHistoryInOneRead) {
  SessionStore& store = *this->store_;
  EXPECT_EQ(store.ReadSession("nope", std::nullopt, true).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(store.ReadSession("../x", std::nullopt, true).error().code,
            ErrorCode::kInvalidArgument);
  this->CommitOne("s", "1");
  const VersionInfo v2 = this->CommitOne("s", "2", "second");
  for (bool with_history : {true, false}) {
    SCOPED_TRACE(with_history ? "with history" : "without history");
    auto current = store.ReadSession("s", std::nullopt, with_history);
    ASSERT_TRUE(current.ok()) << current.error().message;
    ASSERT_TRUE(current->version.has_value());
    EXPECT_EQ(current->version->version, 2);
    EXPECT_EQ(current->version->sha256, v2.sha256);
    EXPECT_EQ(current->version->prompt, "second");
    EXPECT_EQ(current->version->path, v2.path);
    EXPECT_EQ(*ReadWholeFile(current->version->path), "2");
    EXPECT_EQ(current->history.size(), with_history ? 2u : 0u);
    EXPECT_EQ(current->last_issued_version, 2);
    auto first = store.ReadSession("s", 1, with_history);
    ASSERT_TRUE(first.ok() && first->version.has_value());
    EXPECT_EQ(first->version->version, 1);
    EXPECT_EQ(*ReadWholeFile(first->version->path), "1");
    auto missing = store.ReadSession("s", 7, with_history);
    ASSERT_TRUE(missing.ok());
    EXPECT_FALSE(missing->version.has_value());
  }
  {
    auto turn = store.AcquireTurn("s", {});
    ASSERT_TRUE((*turn)->Clear().ok());
  }
  auto cleared = store.ReadSession("s", std::nullopt, true);
  ASSERT_TRUE(cleared.ok());
  EXPECT_FALSE(cleared->version.has_value());
  EXPECT_TRUE(cleared->history.empty());
  EXPECT_EQ(cleared->last_issued_version, 2);
}

TYPED_TEST(StoreContractTest, RetentionPrunesOldestButNeverTheCurrent) {
  this->options_.max_versions_per_session = 3;
  this->Reopen();
  std::vector<VersionInfo> v;
  for (int i = 1; i <= 5; ++i) v.push_back(this->CommitOne("s", "bytes" + std::to_string(i)));
  EXPECT_EQ(this->VersionsOf("s"), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(this->store_->ReadImage(v[0]).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(this->store_->GetVersion("s", 2).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(*this->store_->ReadImage(v[4]), "bytes5");

  this->options_.max_versions_per_session = 1;
  this->Reopen();
  this->CommitOne("s", "bytes6");
  EXPECT_EQ(this->VersionsOf("s"), (std::vector<int64_t>{6}));
  EXPECT_EQ(this->store_->GetVersion("s", std::nullopt)->version, 6);

  this->options_.max_versions_per_session = 0;  // keep everything
  this->Reopen();
  for (int i = 7; i <= 9; ++i) this->CommitOne("s", "bytes" + std::to_string(i));
  EXPECT_EQ(this->VersionsOf("s"), (std::vector<int64_t>{6, 7, 8, 9}));
}

TYPED_TEST(StoreContractTest, IdleSessionsExpireAtOpenWithoutReusingNumbers) {
  this->CommitOne("idle", "a");
  this->CommitOne("idle", "b");
  this->clock_.Advance(std::chrono::hours(24 * 3));
  this->CommitOne("busy", "c");
  this->options_.idle_days = 2;
  this->Reopen();
  SessionStore& store = *this->store_;
  EXPECT_FALSE(store.SessionExists("idle"));
  EXPECT_TRUE(store.SessionExists("busy"));
  EXPECT_EQ(store.GetVersion("idle", 1).error().code, ErrorCode::kNotFound);
  auto page = store.ListSessions(std::nullopt, 10);
  ASSERT_EQ(page->sessions.size(), 1u);
  EXPECT_EQ(page->sessions[0].session_id, "busy");
  {  // A turn alone does not revive it,
    auto turn = store.AcquireTurn("idle", {});
    ASSERT_TRUE(turn.ok());
    EXPECT_FALSE((*turn)->Current().has_value());
    EXPECT_EQ((*turn)->LastIssuedVersion(), 2);
  }
  EXPECT_FALSE(store.SessionExists("idle"));
  // and coming back to the id with a commit continues its numbering.
  EXPECT_EQ(this->CommitOne("idle", "d").version, 3);
  EXPECT_TRUE(store.SessionExists("idle"));
}

TYPED_TEST(StoreContractTest, ListSessionsPagesNewestActivityFirst) {
  for (int i = 0; i < 5; ++i) {
    this->CommitOne("s" + std::to_string(i), "x");
    this->clock_.Advance(std::chrono::seconds(1));
  }
  this->CommitOne("s1", "y");  // s1 becomes the most recent
  std::vector<std::string> seen;
  std::optional<std::string> cursor;
  int pages = 0;
  do {
    auto page = this->store_->ListSessions(cursor, 2);
    ASSERT_TRUE(page.ok()) << page.error().message;
    ASSERT_LE(page->sessions.size(), 2u);
    for (const auto& s : page->sessions) seen.push_back(s.session_id);
    cursor = page->next_cursor;
    ++pages;
  } while (cursor.has_value() && pages < 10);
  EXPECT_EQ(seen, (std::vector<std::string>{"s1", "s4", "s3", "s2", "s0"}));
  EXPECT_EQ(pages, 3);

  auto first = this->store_->ListSessions(std::nullopt, 1);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->sessions[0].current_version, 2);
  EXPECT_EQ(first->sessions[0].version_count, 2);  // a listing counts versions, no manifest read
  ASSERT_TRUE(first->sessions[0].current.has_value());
  EXPECT_EQ(first->sessions[0].current->sha256, Sha256Hex("y"));
  EXPECT_EQ(first->sessions[0].updated_at, "2027-01-15T08:00:05.000Z");

  this->clock_.Advance(std::chrono::seconds(1));
  {  // a cleared session is listed without a current image, as the newest activity
    auto turn = this->store_->AcquireTurn("s0", {});
    ASSERT_TRUE((*turn)->Clear().ok());
  }
  auto all = this->store_->ListSessions(std::nullopt, 0);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->sessions.size(), 5u);
  EXPECT_FALSE(all->next_cursor.has_value());
  EXPECT_EQ(all->sessions[0].session_id, "s0");
  EXPECT_EQ(all->sessions[0].current_version, 0);
  EXPECT_EQ(all->sessions[0].version_count, 0);
  EXPECT_FALSE(all->sessions[0].current.has_value());
  EXPECT_EQ(all->sessions[1].version_count, 2);  // s1
  EXPECT_EQ(all->sessions[2].version_count, 1);  // s4
}

TYPED_TEST(StoreContractTest, BadCursorsAreInvalidArguments) {
  this->CommitOne("s", "x");
  for (const std::string bad :
       {"garbage!!", "", "YWJj", "YzE6eHg6cw==", "YzE6MTo=", "YzE6MTouLi94"}) {
    auto page = this->store_->ListSessions(bad, 10);
    ASSERT_FALSE(page.ok()) << bad;
    EXPECT_EQ(page.error().code, ErrorCode::kInvalidArgument);
  }
}

// A commit made through a second store on the same data (another process or replica) is seen by
// the next turn: a turn reads the state afresh.
TYPED_TEST(StoreContractTest, TurnRereadsStateCommittedByAnotherStore) {
  std::unique_ptr<SessionStore> other = this->Open();
  ASSERT_NE(other, nullptr);
  this->CommitOne("s", "one");
  {
    auto t = other->AcquireTurn("s", {});
    ASSERT_TRUE(t.ok()) << t.error().message;
    ASSERT_TRUE((*t)->Current().has_value());
    EXPECT_EQ((*t)->Current()->version, 1);
    ASSERT_TRUE((*t)->Commit(MakeVersion("two", 1)).ok());
  }
  auto t = this->store_->AcquireTurn("s", {});
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE((*t)->Current().has_value());
  EXPECT_EQ((*t)->Current()->version, 2);
  EXPECT_EQ(*this->store_->ReadImage(*(*t)->Current()), "two");
  auto v3 = (*t)->Commit(MakeVersion("three", 2));
  ASSERT_TRUE(v3.ok());
  EXPECT_EQ(v3->version, 3);
  t->reset();
  EXPECT_EQ(*other->ReadImage(*other->GetVersion("s", 3)), "three");
}

// --- Idempotency keys (docs/design.md §3, "Exactly-once writes") -------------------------------

TYPED_TEST(StoreContractTest, AKeyIsRecordedWithItsCommit) {
  SessionStore& store = *this->store_;
  EXPECT_FALSE(store.FindAppliedKey("s", "k-1")->has_value());  // unknown session: none
  this->CommitOne("s", "one");
  Result<VersionInfo> v2 = this->CommitKeyed("s", "two", "k-1", "digest-a");
  ASSERT_TRUE(v2.ok()) << v2.error().message;
  Result<std::optional<AppliedKey>> found = store.FindAppliedKey("s", "k-1");
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->digest, "digest-a");
  ASSERT_TRUE((*found)->version.has_value());
  EXPECT_EQ((*found)->version->version, 2);
  EXPECT_EQ((*found)->version->sha256, v2->sha256);
  EXPECT_EQ(*ReadWholeFile((*found)->version->path), "two");
  EXPECT_FALSE((*found)->cleared_next.has_value());
  // Keys belong to their session; other keys are not there.
  EXPECT_FALSE(store.FindAppliedKey("other", "k-1")->has_value());
  EXPECT_FALSE(store.FindAppliedKey("s", "k-2")->has_value());
  // Durable: a restarted store (another process, another replica) finds it.
  this->Reopen();
  found = this->store_->FindAppliedKey("s", "k-1");
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->version->version, 2);
  // Several versions in one commit: the key names the last.
  {
    auto turn = this->store_->AcquireTurn("s", {});
    ASSERT_TRUE(turn.ok());
    ASSERT_TRUE((*turn)
                    ->CommitVersions({MakeVersion("import"), MakeVersion("edit", 3)},
                                     IdempotencyRecord{"k:3.x_y-z", "digest-b"})
                    .ok());
  }
  found = this->store_->FindAppliedKey("s", "k:3.x_y-z");
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->version->version, 4);
}

TYPED_TEST(StoreContractTest, AKeyIsRecordedOnceAndASecondUseCommitsNothing) {
  ASSERT_TRUE(this->CommitKeyed("s", "one", "k").ok());
  Result<VersionInfo> again = this->CommitKeyed("s", "two", "k", "d2");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(again.error().message.find("idempotency_key"), std::string::npos)
      << again.error().message;
  EXPECT_EQ(this->VersionsOf("s"), (std::vector<int64_t>{1}));
  EXPECT_EQ(this->CommitOne("s", "two").version, 2);  // the failed commit used no number
  // The same key with another digest is another call: CheckSameCall says so, naming the field.
  Result<std::optional<AppliedKey>> found = this->store_->FindAppliedKey("s", "k");
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_TRUE(CheckSameCall(**found, "d1", "k", "s").ok());
  Status other = CheckSameCall(**found, "d2", "k", "s");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(other.error().message.find("idempotency_key 'k'"), std::string::npos);
  // The same key in another session is another key.
  EXPECT_TRUE(this->CommitKeyed("t", "one", "k", "d2").ok());
}

TYPED_TEST(StoreContractTest, KeysOfTheWrongFormAreRefused) {
  for (const std::string& bad : {std::string(""), std::string(129, 'a'), std::string("a b"),
                                 std::string("k/1"), std::string("ключ")}) {
    Result<std::optional<AppliedKey>> found = this->store_->FindAppliedKey("s", bad);
    ASSERT_FALSE(found.ok()) << bad;
    EXPECT_EQ(found.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(found.error().message.find("idempotency_key"), std::string::npos);
    Result<VersionInfo> committed = this->CommitKeyed("s", "x", bad);
    ASSERT_FALSE(committed.ok()) << bad;
    EXPECT_EQ(committed.error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_FALSE(this->store_->SessionExists("s"));  // nothing was committed
  EXPECT_TRUE(this->CommitKeyed("s", "x", std::string(128, 'Z')).ok());
}

TYPED_TEST(StoreContractTest, AKeyGoesWithItsVersionWhenRetentionPrunesIt) {
  this->options_.max_versions_per_session = 2;
  this->Reopen();
  ASSERT_TRUE(this->CommitKeyed("s", "1", "k1").ok());
  ASSERT_TRUE(this->CommitKeyed("s", "2", "k2").ok());
  EXPECT_TRUE(this->store_->FindAppliedKey("s", "k1")->has_value());
  ASSERT_TRUE(this->CommitKeyed("s", "3", "k3").ok());  // prunes version 1
  EXPECT_EQ(this->VersionsOf("s"), (std::vector<int64_t>{2, 3}));
  EXPECT_FALSE(this->store_->FindAppliedKey("s", "k1")->has_value());
  EXPECT_TRUE(this->store_->FindAppliedKey("s", "k2")->has_value());
  // Gone for good: the key can be used again, for a new version.
  Result<VersionInfo> reused = this->CommitKeyed("s", "4", "k1", "d9");
  ASSERT_TRUE(reused.ok()) << reused.error().message;
  EXPECT_EQ((*this->store_->FindAppliedKey("s", "k1"))->version->version, 4);
}

TYPED_TEST(StoreContractTest, AClearTakesItsVersionsKeysAndKeepsItsOwn) {
  ASSERT_TRUE(this->CommitKeyed("s", "1", "k1").ok());
  ASSERT_TRUE(this->CommitKeyed("s", "2", "k2").ok());
  {
    auto turn = this->store_->AcquireTurn("s", {});
    ASSERT_TRUE(turn.ok());
    ASSERT_TRUE((*turn)->Clear(IdempotencyRecord{"reset-1", "dr"}).ok());
  }
  EXPECT_FALSE(this->store_->FindAppliedKey("s", "k1")->has_value());
  EXPECT_FALSE(this->store_->FindAppliedKey("s", "k2")->has_value());
  Result<std::optional<AppliedKey>> cleared = this->store_->FindAppliedKey("s", "reset-1");
  ASSERT_TRUE(cleared.ok() && cleared->has_value());
  EXPECT_EQ((*cleared)->digest, "dr");
  EXPECT_FALSE((*cleared)->version.has_value());
  EXPECT_EQ((*cleared)->cleared_next, 3);
  // It outlives new versions and a restart, until the next clear.
  EXPECT_EQ(this->CommitOne("s", "3").version, 3);
  this->Reopen();
  EXPECT_EQ((*this->store_->FindAppliedKey("s", "reset-1"))->cleared_next, 3);
  {
    auto turn = this->store_->AcquireTurn("s", {});
    ASSERT_TRUE(turn.ok());
    ASSERT_TRUE((*turn)->Clear().ok());
  }
  EXPECT_FALSE(this->store_->FindAppliedKey("s", "reset-1")->has_value());
}

TYPED_TEST(StoreContractTest, AnIdleSessionsKeysExpireWithIt) {
  ASSERT_TRUE(this->CommitKeyed("idle", "a", "k1").ok());
  {
    auto turn = this->store_->AcquireTurn("idle", {});
    ASSERT_TRUE(turn.ok());
    ASSERT_TRUE((*turn)->Clear(IdempotencyRecord{"k2", "d"}).ok());
  }
  ASSERT_TRUE(this->CommitKeyed("idle", "b", "k3").ok());
  this->clock_.Advance(std::chrono::hours(24 * 3));
  this->options_.idle_days = 2;
  this->Reopen();
  for (const char* key : {"k1", "k2", "k3"}) {
    Result<std::optional<AppliedKey>> found = this->store_->FindAppliedKey("idle", key);
    ASSERT_TRUE(found.ok()) << found.error().message;
    EXPECT_FALSE(found->has_value()) << key;
  }
}

}  // namespace
}  // namespace imgmcp::session
