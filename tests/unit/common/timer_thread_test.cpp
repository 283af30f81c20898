// TimerThread and RepeatingTimer (common/timer_thread.h): callbacks in deadline order on one
// thread, a cancel that waits for a callback running now, and a repeating timer that stops
// ticking once destroyed. Label concurrency: these run under ThreadSanitizer too.
#include "common/timer_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace imgmcp {
namespace {

using std::chrono::milliseconds;
using Clock = TimerThread::Clock;

TEST(TimerThreadTest, RunsCallbacksInDeadlineOrderNotScheduleOrder) {
  TimerThread timers;
  std::mutex mu;
  std::vector<int> order;
  std::promise<void> last;
  const auto now = Clock::now();
  timers.Schedule(now + milliseconds(60), [&] {
    std::lock_guard<std::mutex> lock(mu);
    order.push_back(3);
    last.set_value();
  });
  timers.Schedule(now + milliseconds(20), [&] {
    std::lock_guard<std::mutex> lock(mu);
    order.push_back(1);
  });
  timers.Schedule(now + milliseconds(40), [&] {
    std::lock_guard<std::mutex> lock(mu);
    order.push_back(2);
  });
  ASSERT_EQ(last.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

// The loop sleeps until its earliest timer; one scheduled earlier still must wake it (a later one
// need not: it is not due before the one the loop waits for).
TEST(TimerThreadTest, AnEarlierTimerScheduledWhileTheLoopWaitsRunsOnTime) {
  TimerThread timers;
  std::promise<void> started;  // the loop runs, and then waits for the next timer
  timers.Schedule(Clock::now(), [&] { started.set_value(); });
  ASSERT_EQ(started.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  timers.Schedule(Clock::now() + std::chrono::hours(1), [] {});
  std::promise<void> soon;
  timers.Schedule(Clock::now() + milliseconds(20), [&] { soon.set_value(); });
  timers.Schedule(Clock::now() + std::chrono::hours(2), [] {});  // later: no wake needed
  EXPECT_EQ(soon.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
}

TEST(TimerThreadTest, ACancelledTimerNeverRuns) {
  TimerThread timers;
  std::atomic<bool> ran{false};
  const TimerThread::Id id = timers.Schedule(Clock::now() + milliseconds(30), [&] { ran = true; });
  timers.Cancel(id);
  std::promise<void> later;
  timers.Schedule(Clock::now() + milliseconds(60), [&] { later.set_value(); });
  ASSERT_EQ(later.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_FALSE(ran);
}

// Cancel returns only once a callback running now has finished: its state may go afterwards.
TEST(TimerThreadTest, CancelWaitsForTheCallbackRunningNow) {
  TimerThread timers;
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> finished{false};
  const TimerThread::Id id = timers.Schedule(Clock::now(), [&] {
    entered.set_value();
    released.wait();
    finished = true;
  });
  entered.get_future().wait();
  auto cancelling = std::async(std::launch::async, [&] { timers.Cancel(id); });
  EXPECT_EQ(cancelling.wait_for(milliseconds(50)), std::future_status::timeout);
  release.set_value();
  ASSERT_EQ(cancelling.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_TRUE(finished);
}

TEST(RepeatingTimerTest, TicksCountTheIntervalsAndStopWithTheTimer) {
  TimerThread timers;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int> ticks;
  {
    RepeatingTimer timer(timers, milliseconds(5), [&](int n) {
      std::lock_guard<std::mutex> lock(mu);
      ticks.push_back(n);
      cv.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return ticks.size() >= 3; }));
  }
  std::vector<int> seen;
  {
    std::lock_guard<std::mutex> lock(mu);
    seen = ticks;
  }
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], static_cast<int>(i) + 1);
  // Destroyed: no tick after it. A timer scheduled later runs, and the list has not grown.
  std::promise<void> later;
  timers.Schedule(Clock::now() + milliseconds(30), [&] { later.set_value(); });
  ASSERT_EQ(later.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(ticks, seen);
}

}  // namespace
}  // namespace imgmcp
