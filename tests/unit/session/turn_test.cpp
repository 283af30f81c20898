// SessionStore turns with threads: the cross-process lock, cancellation, parallel sessions.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "session/file_lock.h"
#include "session/sqlite_session_store.h"
#include "test_util.h"

namespace imgmcp::session {
namespace {

using testing::FakeClock;
using testing::MakeVersion;
using testing::TempDir;

constexpr auto kWait = std::chrono::seconds(20);

class TurnTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.data_dir = tmp_.path();
    auto opened = SqliteSessionStore::Open(options_, clock_);
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    store_ = std::move(*opened);
  }
  TempDir tmp_;
  FakeClock clock_;
  StoreOptions options_;
  std::unique_ptr<SqliteSessionStore> store_;
};

TEST_F(TurnTest, DifferentSessionsRunInParallel) {
  auto a = store_->AcquireTurn("a", {});
  ASSERT_TRUE(a.ok());
  auto b = std::async(std::launch::async, [&] { return store_->AcquireTurn("b", {}).ok(); });
  ASSERT_EQ(b.wait_for(kWait), std::future_status::ready);
  EXPECT_TRUE(b.get());
}

TEST_F(TurnTest, CancelWhileQueuedCommitsNothingAndLeavesTheLine) {
  auto holder = store_->AcquireTurn("s", {});
  ASSERT_TRUE(holder.ok());
  std::mutex mu;  // guards queued
  std::condition_variable cv;
  int queued = -1;
  TurnOptions opts;
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
    CancellationToken token;
    ~CancelOnExit() { token.Cancel(); }
  } cancel_on_exit{opts.cancel};
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, kWait, [&] { return queued == 1; }));
  }
  EXPECT_EQ(store_->QueuedTurns("s"), 2);
  opts.cancel.Cancel();
  ASSERT_EQ(waiter.wait_for(kWait), std::future_status::ready);
  EXPECT_EQ(waiter.get(), ErrorCode::kCancelled);
  EXPECT_EQ(store_->QueuedTurns("s"), 1);
  ASSERT_TRUE((*holder)->Commit(MakeVersion("x")).ok());
  EXPECT_EQ((*holder)->LastIssuedVersion(), 1);
}

// Another process holds the session (simulated by a second open file description of the lock
// file, which flock treats as a separate owner): the turn waits for it, and can be cancelled.
TEST_F(TurnTest, WaitsForTheCrossProcessLockAndHonoursCancellation) {
  auto other = FileLock::TryAcquire(tmp_.path() / "locks" / "s.lock");
  ASSERT_TRUE(other.ok() && other->has_value());

  TurnOptions cancelled;
  auto first = std::async(std::launch::async, [&] { return store_->AcquireTurn("s", cancelled); });
  EXPECT_EQ(first.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  cancelled.cancel.Cancel();
  ASSERT_EQ(first.wait_for(kWait), std::future_status::ready);
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

  auto other = FileLock::TryAcquire(tmp_.path() / "locks" / "s.lock");
  ASSERT_TRUE(other.ok() && other->has_value());
  auto waiting = std::async(std::launch::async, [&] { return store_->AcquireTurn("s", options); });
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  EXPECT_EQ(reports.load(), 1);
  other->reset();
  ASSERT_EQ(waiting.wait_for(kWait), std::future_status::ready);
  EXPECT_TRUE(waiting.get().ok());
  EXPECT_EQ(reports.load(), 1);
}

// A commit made by "another process" (a second store on the same data dir) while we were waiting
// is seen by the next turn: the state is re-read after the lock is taken.
TEST_F(TurnTest, TurnRereadsStateCommittedByAnotherStore) {
  auto other = SqliteSessionStore::Open(options_, clock_);
  ASSERT_TRUE(other.ok());
  {
    auto t = store_->AcquireTurn("s", {});
    ASSERT_TRUE((*t)->Commit(MakeVersion("one")).ok());
  }
  {
    auto t = (*other)->AcquireTurn("s", {});
    ASSERT_TRUE(t.ok());
    EXPECT_EQ((*t)->Current()->version, 1);
    ASSERT_TRUE((*t)->Commit(MakeVersion("two", 1)).ok());
  }
  auto t = store_->AcquireTurn("s", {});
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE((*t)->Current().has_value());
  EXPECT_EQ((*t)->Current()->version, 2);
  EXPECT_EQ(*store_->ReadImage(*(*t)->Current()), "two");
  auto v3 = (*t)->Commit(MakeVersion("three", 2));
  ASSERT_TRUE(v3.ok());
  EXPECT_EQ(v3->version, 3);
}

TEST_F(TurnTest, BackendSlotsCapConcurrency) {
  options_.max_concurrent_backend_calls = 3;
  auto opened = SqliteSessionStore::Open(options_, clock_);
  ASSERT_TRUE(opened.ok());
  SqliteSessionStore& store = **opened;
  std::mutex mu;  // guards running, max_running
  std::condition_variable cv;
  int running = 0, max_running = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      store.RunWithBackendSlot([&] {
        std::unique_lock lock(mu);
        max_running = std::max(max_running, ++running);
        cv.notify_all();
        cv.wait_for(lock, kWait, [&] { return max_running >= 3; });
        --running;
      });
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(max_running, 3);
}

}  // namespace
}  // namespace imgmcp::session

namespace imgmcp::session {
namespace {

// Turns follow the order places were reserved (arrival), not the order threads start waiting:
// the protocol core reserves on its reading thread and worker threads start in any order.
TEST(ReservedTurnTest, TurnsFollowReservationOrderNotThreadStartOrder) {
  testing::TempDir tmp;
  testing::FakeClock clock;
  StoreOptions options;
  options.data_dir = tmp.path();
  auto opened = SqliteSessionStore::Open(options, clock);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  auto& store = **opened;
  constexpr int kCalls = 12;
  std::vector<std::unique_ptr<TurnReservation>> reservations;
  for (int i = 0; i < kCalls; ++i) {
    auto r = store.ReserveTurn("s");
    ASSERT_TRUE(r.ok());
    reservations.push_back(std::move(*r));
  }
  std::mutex mu;  // guards order
  std::vector<int> order;
  std::vector<std::thread> threads;
  for (int i = kCalls - 1; i >= 0; --i) {  // start the last-reserved first
    threads.emplace_back([&, i, r = std::move(reservations[i])]() mutable {
      auto turn = store.AcquireReservedTurn(std::move(r), {});
      ASSERT_TRUE(turn.ok()) << turn.error().message;
      auto v = (*turn)->Commit(testing::MakeVersion("bytes-" + std::to_string(i)));
      ASSERT_TRUE(v.ok()) << v.error().message;
      std::lock_guard lock(mu);
      order.push_back(i);
    });
  }
  for (auto& t : threads) t.join();
  std::vector<int> expected(kCalls);
  for (int i = 0; i < kCalls; ++i) expected[i] = i;
  EXPECT_EQ(order, expected);
}

TEST(ReservedTurnTest, DroppingAReservationLetsTheNextOneIn) {
  testing::TempDir tmp;
  testing::FakeClock clock;
  StoreOptions options;
  options.data_dir = tmp.path();
  auto opened = SqliteSessionStore::Open(options, clock);
  ASSERT_TRUE(opened.ok());
  auto first = (*opened)->ReserveTurn("s");
  auto second = (*opened)->ReserveTurn("s");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ((*opened)->QueuedTurns("s"), 2);
  first->reset();  // e.g. the call was cancelled before it started
  auto turn = std::async(std::launch::async, [&] {
    return (*opened)->AcquireReservedTurn(std::move(*second), {}).ok();
  });
  ASSERT_EQ(turn.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_TRUE(turn.get());
  EXPECT_EQ((*opened)->ReserveTurn("../x").ok(), false);
}

}  // namespace
}  // namespace imgmcp::session
