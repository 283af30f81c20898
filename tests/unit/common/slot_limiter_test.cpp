// SlotLimiter: never more than the limit at once.
#include "common/slot_limiter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace imgmcp {
namespace {

constexpr auto kWait = std::chrono::seconds(20);  // bound for waits that should succeed quickly

TEST(SlotLimiterTest, NeverRunsMoreThanTheLimitAtOnce) {
  SlotLimiter slots(2);
  std::mutex mu;  // guards running, max_running
  std::condition_variable cv;
  int running = 0;
  int max_running = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] {
      slots.Run([&] {
        std::unique_lock lock(mu);
        ++running;
        max_running = std::max(max_running, running);
        cv.notify_all();
        // Hold the slot until a second caller is inside too (or everyone else has finished).
        cv.wait_for(lock, kWait, [&] { return max_running >= 2; });
        --running;
      });
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(max_running, 2);
  EXPECT_EQ(slots.InUse(), 0);
}

}  // namespace
}  // namespace imgmcp
