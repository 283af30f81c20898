#include "mcp/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace imgmcp::mcp {
namespace {

using std::chrono::seconds;

// A latch the tasks wait on, so a test controls exactly how many are running.
class Gate {
 public:
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return open_; });
  }
  void Arrive() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++arrived_;
    }
    cv_.notify_all();
  }
  bool WaitArrived(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, seconds(10), [&] { return arrived_ >= n; });
  }

 private:
  std::mutex mu_;  // guards open_, arrived_
  std::condition_variable cv_;
  bool open_ = false;
  int arrived_ = 0;
};

TEST(WorkerPoolTest, BlockedTasksDoNotDelayNewOnes) {
  WorkerPool pool(64);
  Gate gate;
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(pool.Submit([&] {
                      gate.Arrive();
                      gate.Wait();
                    })
                    .ok());
  }
  // All 20 run at once although none has finished.
  EXPECT_TRUE(gate.WaitArrived(20));
  EXPECT_EQ(pool.ThreadCount(), 20u);
  gate.Open();
  pool.Shutdown();
}

TEST(WorkerPoolTest, RefusesBeyondTheCapAndReusesIdleThreads) {
  WorkerPool pool(2);
  Gate gate;
  ASSERT_TRUE(pool.Submit([&] {
                    gate.Arrive();
                    gate.Wait();
                  })
                  .ok());
  ASSERT_TRUE(pool.Submit([&] {
                    gate.Arrive();
                    gate.Wait();
                  })
                  .ok());
  ASSERT_TRUE(gate.WaitArrived(2));
  Status busy = pool.Submit([] {});
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.error().code, ErrorCode::kResourceExhausted);
  gate.Open();
  pool.Shutdown();
  EXPECT_FALSE(pool.Submit([] {}).ok());
}

TEST(WorkerPoolTest, ShutdownRunsEverySubmittedTask) {
  std::atomic<int> ran{0};
  {
    WorkerPool pool(4);
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(pool.Submit([&] { ++ran; }).ok());
    pool.Shutdown();
  }
  EXPECT_EQ(ran.load(), 4);
}

}  // namespace
}  // namespace imgmcp::mcp
