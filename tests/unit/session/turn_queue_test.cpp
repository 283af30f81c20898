// TurnQueue: FIFO order, on_queued reports, cancellation while queued.
#include "session/sqlite/turn_queue.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>
#include <vector>

#include "test_util.h"

namespace imgmcp::session {
namespace {

using testing::kWait;

// Records on_queued reports of one waiter and lets the test wait for a given report.
class QueuedProbe {
 public:
  std::function<void(int)> Callback() {
    return [this](int ahead) {
      std::lock_guard lock(mu_);
      reports_.push_back(ahead);
      cv_.notify_all();
    };
  }
  bool WaitFor(int ahead) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kWait, [&] { return !reports_.empty() && reports_.back() == ahead; });
  }
  std::vector<int> Reports() {
    std::lock_guard lock(mu_);
    return reports_;
  }

 private:
  std::mutex mu_;  // guards reports_
  std::condition_variable cv_;
  std::vector<int> reports_;
};

// A thread that enters the queue and keeps its ticket until told to leave.
class Waiter {
 public:
  Waiter(sqlite::TurnQueue& q, const std::string& id, std::stop_source cancel = {})
      : cancel_(cancel), thread_([this, &q, id, token = cancel.get_token()] {
          Result<sqlite::TurnQueue::Ticket> t = q.Enter(id, token, probe.Callback());
          std::unique_lock lock(mu_);
          got_ = t.ok();
          code_ = t.ok() ? std::nullopt : std::optional(t.error().code);
          done_ = true;
          cv_.notify_all();
          cv_.wait(lock, [&] { return release_; });
        }) {}
  // Cancels a still-waiting Enter first, so a failed test cannot hang here.
  ~Waiter() {
    cancel_.request_stop();
    Release();
    thread_.join();
  }
  // True when Enter returned (with the turn or an error) within the bound.
  bool WaitEntered() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kWait, [&] { return done_; });
  }
  bool entered() {
    std::lock_guard lock(mu_);
    return done_ && got_;
  }
  std::optional<ErrorCode> error() {
    std::lock_guard lock(mu_);
    return code_;
  }
  void Release() {
    std::lock_guard lock(mu_);
    release_ = true;
    cv_.notify_all();
  }

  QueuedProbe probe;

 private:
  std::mutex mu_;  // guards done_, got_, code_, release_
  std::condition_variable cv_;
  bool done_ = false;
  bool got_ = false;
  std::optional<ErrorCode> code_;
  bool release_ = false;
  std::stop_source cancel_;
  std::thread thread_;
};

TEST(TurnQueueTest, FirstComerGetsTheTurnAtOnce) {
  sqlite::TurnQueue q;
  QueuedProbe probe;
  Result<sqlite::TurnQueue::Ticket> t = q.Enter("s", {}, probe.Callback());
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(probe.Reports().empty());  // never waited
  EXPECT_EQ(q.LineLength("s"), 1);
}

TEST(TurnQueueTest, WaitersGoInArrivalOrderAndHearHowManyAreAhead) {
  sqlite::TurnQueue q;
  std::optional<Result<sqlite::TurnQueue::Ticket>> first(q.Enter("s", {}, nullptr));
  ASSERT_TRUE(first->ok());
  Waiter second(q, "s");
  ASSERT_TRUE(second.probe.WaitFor(1));
  Waiter third(q, "s");
  ASSERT_TRUE(third.probe.WaitFor(2));
  EXPECT_EQ(q.LineLength("s"), 3);

  first.reset();  // release: second is next, third moves up to 1 ahead
  ASSERT_TRUE(second.WaitEntered());
  EXPECT_TRUE(second.entered());
  ASSERT_TRUE(third.probe.WaitFor(1));
  EXPECT_FALSE(third.entered());
  second.Release();
  ASSERT_TRUE(third.WaitEntered());
  EXPECT_TRUE(third.entered());
  EXPECT_EQ(third.probe.Reports(), (std::vector<int>{2, 1}));
}

TEST(TurnQueueTest, CancelledWaiterLeavesWithoutDisturbingOthers) {
  sqlite::TurnQueue q;
  std::optional<Result<sqlite::TurnQueue::Ticket>> first(q.Enter("s", {}, nullptr));
  std::stop_source cancel;
  Waiter second(q, "s", cancel);
  ASSERT_TRUE(second.probe.WaitFor(1));
  Waiter third(q, "s");
  ASSERT_TRUE(third.probe.WaitFor(2));

  cancel.request_stop();
  ASSERT_TRUE(second.WaitEntered());
  EXPECT_EQ(second.error(), ErrorCode::kCancelled);
  ASSERT_TRUE(third.probe.WaitFor(1));  // moved up, still waiting for the holder
  EXPECT_FALSE(third.entered());
  EXPECT_EQ(q.LineLength("s"), 2);

  first.reset();
  ASSERT_TRUE(third.WaitEntered());
  EXPECT_TRUE(third.entered());
}

TEST(TurnQueueTest, CancelledBeforeArrivingStillGetsAFreeTurn) {
  // Cancellation only matters while waiting: an uncontended caller is not refused here (the
  // store checks cancellation again before handing out the turn).
  sqlite::TurnQueue q;
  std::stop_source cancel;
  cancel.request_stop();
  EXPECT_TRUE(q.Enter("s", cancel.get_token(), nullptr).ok());
}

TEST(TurnQueueTest, SessionsAreIndependent) {
  sqlite::TurnQueue q;
  Result<sqlite::TurnQueue::Ticket> a = q.Enter("a", {}, nullptr);
  ASSERT_TRUE(a.ok());
  Waiter b(q, "b");
  ASSERT_TRUE(b.WaitEntered());
  EXPECT_TRUE(b.entered());
  EXPECT_TRUE(b.probe.Reports().empty());
}

TEST(TurnQueueTest, EmptyLinesAreForgotten) {
  sqlite::TurnQueue q;
  { Result<sqlite::TurnQueue::Ticket> t = q.Enter("s", {}, nullptr); }
  EXPECT_EQ(q.LineLength("s"), 0);
}

}  // namespace
}  // namespace imgmcp::session
