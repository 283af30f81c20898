// SqliteSessionStore turns with threads: the flock between processes, cancellation while queued.
// (What every store does with threads is in store_contract_concurrency_test.cpp.)
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <stop_token>
#include <thread>

#include "session/sqlite/file_lock.h"
#include "session/sqlite/sqlite_session_store.h"
#include "test_util.h"

namespace imgmcp::session {
namespace {

using testing::FakeClock;
using testing::MakeVersion;
using testing::TempDir;

using testing::kWait;

class TurnTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.data_dir = tmp_.path();
    auto opened = sqlite::SqliteSessionStore::Open(options_, clock_);
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    store_ = std::move(*opened);
  }
  TempDir tmp_;
  FakeClock clock_;
  StoreOptions options_;
  std::unique_ptr<sqlite::SqliteSessionStore> store_;
};

TEST_F(TurnTest, CancelWhileQueuedCommitsNothingAndLeavesTheLine) {
  auto holder = store_->AcquireTurn("s", {});
  ASSERT_TRUE(holder.ok());
  std::mutex mu;  // guards queued
  std::condition_variable cv;
  int queued = -1;
  TurnOptions opts;
  std::stop_source opts_stop;
  opts.cancel = opts_stop.get_token();
  opts.on_queued = [&](int ahead) {
    std::lock_guard lock(mu);
    queued = ahead;
    cv.notify_all();
  };
  auto waiter = std::async(std::launch::async, [&] {
    auto turn = store_->AcquireTurn("s", opts);
    return turn.ok() ? std::optional<ErrorCode>() : std::optional(turn.error().code);
  });
  struct CancelOnExit {  // a failed assertion must not leave the waiter blocked forever
    std::stop_source source;
    ~CancelOnExit() { source.request_stop(); }
  } cancel_on_exit{opts_stop};
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, kWait, [&] { return queued == 1; }));
  }
  EXPECT_EQ(store_->QueuedTurns("s"), 2);
  opts_stop.request_stop();
  ASSERT_EQ(waiter.wait_for(kWait), std::future_status::ready);
  EXPECT_EQ(waiter.get(), ErrorCode::kCancelled);
  EXPECT_EQ(store_->QueuedTurns("s"), 1);
  ASSERT_TRUE((*holder)->Commit(MakeVersion("x")).ok());
  EXPECT_EQ((*holder)->LastIssuedVersion(), 1);
}

// Another process holds the session (simulated by a second open file description of the lock
// file, which flock treats as a separate owner): the turn waits for it, and can be cancelled.
TEST_F(TurnTest, WaitsForTheCrossProcessLockAndHonoursCancellation) {
  auto other = sqlite::FileLock::TryAcquire(tmp_.path() / "locks" / "s.lock");
  ASSERT_TRUE(other.ok() && other->has_value());

  TurnOptions cancelled;
  std::stop_source cancelled_stop;
  cancelled.cancel = cancelled_stop.get_token();
  auto first = std::async(std::launch::async, [&] { return store_->AcquireTurn("s", cancelled); });
  EXPECT_EQ(first.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  const auto cancelled_at = std::chrono::steady_clock::now();
  cancelled_stop.request_stop();
  ASSERT_EQ(first.wait_for(kWait), std::future_status::ready);
  // Woken by the cancel, not found by a poll: well within 20 ms.
  EXPECT_LT(std::chrono::steady_clock::now() - cancelled_at, std::chrono::milliseconds(20));
  auto r = first.get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(store_->QueuedTurns("s"), 0);

  auto second = std::async(std::launch::async, [&] { return store_->AcquireTurn("s", {}); });
  other->reset();  // the other process finishes
  ASSERT_EQ(second.wait_for(kWait), std::future_status::ready);
  EXPECT_TRUE(second.get().ok());
}

// Waiting for another process's lock is reported once (its edits cannot be counted); a free lock
// reports nothing.
TEST_F(TurnTest, ReportsOnceThatItWaitsForAnotherProcess) {
  std::atomic<int> reports{0};
  TurnOptions options;
  options.on_other_process = [&] { ++reports; };
  {
    auto free = store_->AcquireTurn("s", options);
    ASSERT_TRUE(free.ok());
  }
  EXPECT_EQ(reports.load(), 0);

  auto other = sqlite::FileLock::TryAcquire(tmp_.path() / "locks" / "s.lock");
  ASSERT_TRUE(other.ok() && other->has_value());
  auto waiting = std::async(std::launch::async, [&] { return store_->AcquireTurn("s", options); });
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  EXPECT_EQ(reports.load(), 1);
  other->reset();
  ASSERT_EQ(waiting.wait_for(kWait), std::future_status::ready);
  EXPECT_TRUE(waiting.get().ok());
  EXPECT_EQ(reports.load(), 1);
}

}  // namespace
}  // namespace imgmcp::session
