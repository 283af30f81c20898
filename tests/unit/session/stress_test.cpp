// Many threads editing one session (and 16 sessions) at once. Each edit reads the current version
// inside its turn and commits the next one. Checks: no lost update, versions 1..N exactly once,
// commits happen in the exact order the edits arrived, and every parent is the previous version.
//
// How arrival order is made observable: a thread takes `entry_mu` (its session's), appends itself
// to the arrival log and calls AcquireTurn; it lets go of `entry_mu` as soon as its ticket is in
// the line — when on_queued fires (it has to wait) or when AcquireTurn returns (it did not). So at
// most one edit is ever between "logged" and "queued", and the arrival log is the ticket order.
// A FIFO store must then commit in exactly that order; a bare mutex would not.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "session/sqlite_session_store.h"
#include "test_util.h"

namespace imgmcp::session {
namespace {

using testing::FakeClock;
using testing::TempDir;

constexpr int kThreads = 64;
constexpr int kEditsPerThread = 50;

struct SessionLog {
  std::mutex entry_mu;  // held from "logged as arrived" until "ticket is in the line"
  std::mutex log_mu;    // guards arrivals and commits
  std::vector<std::string> arrivals;
  std::vector<std::string> commits;
  std::vector<std::string> failures;
  int max_ahead = 0;  // the longest wait reported by on_queued (guarded by log_mu)
};

std::string EditName(int thread, int seq) {
  return "t" + std::to_string(thread) + "-s" + std::to_string(seq);
}

void RunEdit(SessionStore& store, const std::string& session_id, SessionLog& log, int thread,
             int seq) {
  const std::string name = EditName(thread, seq);
  auto fail = [&](const std::string& why) {
    std::lock_guard lock(log.log_mu);
    log.failures.push_back(name + ": " + why);
  };
  std::unique_lock entry(log.entry_mu);
  {
    std::lock_guard lock(log.log_mu);
    log.arrivals.push_back(name);
  }
  TurnOptions opts;
  opts.on_queued = [&](int ahead) {
    if (ahead < 1) fail("on_queued with ahead < 1");
    {
      std::lock_guard lock(log.log_mu);
      log.max_ahead = std::max(log.max_ahead, ahead);
    }
    if (entry.owns_lock()) entry.unlock();
  };
  auto turn = store.AcquireTurn(session_id, opts);
  if (entry.owns_lock()) entry.unlock();
  if (!turn.ok()) return fail(turn.error().message);

  const std::optional<VersionInfo> current = (*turn)->Current();
  const int64_t n = current.has_value() ? current->version : 0;
  if (n != (*turn)->LastIssuedVersion()) fail("current is not the last issued version");
  NewVersion nv;
  nv.bytes = name + " read v" + std::to_string(n);
  nv.prompt = nv.bytes;
  nv.mime_type = "image/png";
  nv.file_extension = ".png";
  nv.operation = n == 0 ? "generate" : "edit";
  if (n > 0) nv.parent = n;
  {
    // Logged inside the turn, so this is the true commit order.
    std::lock_guard lock(log.log_mu);
    log.commits.push_back(name);
  }
  Result<VersionInfo> v = (*turn)->Commit(nv);
  if (!v.ok()) return fail(v.error().message);
  if (v->version != n + 1)
    fail("lost update: read v" + std::to_string(n) + ", committed v" + std::to_string(v->version));
}

// Verifies one session's chain against its log.
void CheckSession(SessionStore& store, const std::string& session_id, const SessionLog& log,
                  size_t expected_versions) {
  EXPECT_TRUE(log.failures.empty()) << log.failures.front();
  ASSERT_EQ(log.arrivals.size(), expected_versions);
  EXPECT_EQ(log.commits, log.arrivals) << "commit order differs from arrival order";

  auto history = store.History(session_id);
  ASSERT_TRUE(history.ok()) << history.error().message;
  ASSERT_EQ(history->size(), expected_versions);
  std::set<std::string> names;
  for (size_t i = 0; i < history->size(); ++i) {
    const VersionInfo& v = (*history)[i];
    const int64_t expected = static_cast<int64_t>(i) + 1;
    ASSERT_EQ(v.version, expected);
    if (expected == 1) {
      EXPECT_FALSE(v.parent.has_value());
    } else {
      EXPECT_EQ(v.parent, expected - 1);
    }
    const std::string name = v.prompt.substr(0, v.prompt.find(' '));
    EXPECT_EQ(v.prompt, name + " read v" + std::to_string(expected - 1));
    EXPECT_EQ(name, log.commits[i]);
    EXPECT_TRUE(names.insert(name).second) << "edit committed twice: " << name;
    Result<std::string> bytes = store.ReadImage(v);
    ASSERT_TRUE(bytes.ok()) << bytes.error().message;
    EXPECT_EQ(*bytes, v.prompt);
  }
}

class StressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.data_dir = tmp_.path();
    options_.max_versions_per_session = 0;  // keep every version for the checks
    auto opened = SqliteSessionStore::Open(options_, clock_);
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    store_ = std::move(*opened);
  }
  TempDir tmp_;
  FakeClock clock_;
  StoreOptions options_;
  std::unique_ptr<SqliteSessionStore> store_;
};

TEST_F(StressTest, SixtyFourThreadsOnOneSession) {
  SessionLog log;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int s = 0; s < kEditsPerThread; ++s) RunEdit(*store_, "one", log, t, s);
    });
  }
  for (auto& th : threads) th.join();
  CheckSession(*store_, "one", log, kThreads * kEditsPerThread);
  EXPECT_GE(log.max_ahead, 2) << "the line never formed: the test did not exercise queueing";
  EXPECT_EQ(store_->QueuedTurns("one"), 0);
}

TEST_F(StressTest, SixtyFourThreadsOnSixteenSessions) {
  constexpr int kSessions = 16;
  std::map<std::string, SessionLog> logs;
  for (int i = 0; i < kSessions; ++i) logs["s" + std::to_string(i)];
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string id = "s" + std::to_string(t % kSessions);
      for (int s = 0; s < kEditsPerThread; ++s) RunEdit(*store_, id, logs.at(id), t, s);
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& [id, log] : logs) {
    SCOPED_TRACE(id);
    CheckSession(*store_, id, log, kThreads / kSessions * kEditsPerThread);
  }
  auto page = store_->ListSessions(std::nullopt, 100);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->sessions.size(), static_cast<size_t>(kSessions));
}

// Readers on their own store (as another process would be) while writers commit: every
// ReadSession is one moment: its version is the newest entry of its history.
TEST_F(StressTest, ReadSessionNeverMixesTwoMomentsWhileOthersCommit) {
  auto reader_store = SqliteSessionStore::Open(options_, clock_);
  ASSERT_TRUE(reader_store.ok()) << reader_store.error().message;
  constexpr int kWriters = 4;
  constexpr int kCommitsPerWriter = 100;
  std::atomic<bool> writing{true};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kCommitsPerWriter; ++i) {
        auto turn = store_->AcquireTurn("read", {});
        ASSERT_TRUE(turn.ok()) << turn.error().message;
        std::optional<int64_t> parent;
        if (auto cur = (*turn)->Current()) parent = cur->version;
        NewVersion v;
        v.bytes = "w" + std::to_string(w) + "-" + std::to_string(i);
        v.parent = parent;
        v.operation = "edit";
        v.prompt = v.bytes;
        v.mime_type = "image/png";
        v.file_extension = ".png";
        v.width = v.height = 1;
        v.backend = "local";
        v.model = "m";
        ASSERT_TRUE((*turn)->Commit(v).ok());
      }
    });
  }
  std::vector<std::string> failures;
  std::set<int64_t> seen;
  std::thread reader([&] {
    while (writing.load()) {
      auto snap = (*reader_store)->ReadSession("read", std::nullopt, true);
      if (!snap.ok()) continue;  // before the first commit the session does not exist
      if (snap->history.empty() || !snap->version.has_value()) continue;
      seen.insert(snap->version->version);
      if (snap->version->version != snap->history.back().version) {
        failures.push_back("version " + std::to_string(snap->version->version) +
                           " with a history ending at " +
                           std::to_string(snap->history.back().version));
      }
      if (snap->last_issued_version < snap->version->version) {
        failures.push_back("last issued below the version read");
      }
    }
  });
  for (auto& th : writers) th.join();
  writing = false;
  reader.join();
  EXPECT_TRUE(failures.empty()) << failures.size() << " mixed reads, first: " << failures[0];
  EXPECT_GT(seen.size(), 1u) << "the reads never overlapped a commit";
}

}  // namespace
}  // namespace imgmcp::session
