// ByteBudget: leases never hold more than the limit together; one that does not fit is refused at
// once (busy, or larger than the whole budget) with the sizes and the flag; ending a lease gives
// its bytes back.
#include "common/byte_budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <random>
#include <thread>
#include <vector>

namespace imgmcp {
namespace {

constexpr size_t kMB = 1u << 20;

TEST(ByteBudgetTest, ALeaseLargerThanTheBudgetIsRefused) {
  ByteBudget budget(100 * kMB, "--max-inflight-mb");
  auto lease = budget.Acquire(300 * kMB, "this edit_image call");
  ASSERT_FALSE(lease.ok());
  EXPECT_EQ(lease.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(lease.error().message,
            "this edit_image call needs about 300 MB of memory while it runs, more than "
            "--max-inflight-mb allows (100 MB); send fewer or smaller images, or raise "
            "--max-inflight-mb");
  EXPECT_EQ(budget.InUse(), 0u);
}

TEST(ByteBudgetTest, ALeaseThatDoesNotFitBesideOthersIsBusyUntilTheyEnd) {
  ByteBudget budget(100 * kMB, "--max-inflight-mb");
  auto first = budget.Acquire(60 * kMB, "the first call");
  ASSERT_TRUE(first.ok());
  std::optional<ByteBudget::Lease> held(std::move(*first));
  auto second = budget.Acquire(60 * kMB, "this generate_image call");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(second.error().message,
            "busy: calls in flight hold 60 MB of the 100 MB imgmcp may use for images "
            "(--max-inflight-mb) and this generate_image call needs about 60 MB; retry when one of "
            "them has finished");
  auto small = budget.Acquire(40 * kMB, "a small call");
  EXPECT_TRUE(small.ok());
  EXPECT_EQ(budget.InUse(), 100 * kMB);
  held.reset();
  EXPECT_EQ(budget.InUse(), 40 * kMB);
  EXPECT_TRUE(budget.Acquire(60 * kMB, "this generate_image call").ok());
}

TEST(ByteBudgetTest, UnlimitedGrantsEverything) {
  ByteBudget budget(0, "--max-inflight-mb");
  auto a = budget.Acquire(size_t{1} << 40, "a");
  auto b = budget.Acquire(size_t{1} << 40, "b");
  EXPECT_TRUE(a.ok());
  EXPECT_TRUE(b.ok());
  EXPECT_EQ(budget.InUse(), 0u);
}

TEST(ByteBudgetTest, AMovedLeaseGivesItsBytesBackOnce) {
  ByteBudget budget(100, "--max-inflight-mb");
  auto granted = budget.Acquire(30, "a");
  ASSERT_TRUE(granted.ok());
  ByteBudget::Lease moved = std::move(*granted);
  ByteBudget::Lease assigned;
  assigned = std::move(moved);
  EXPECT_EQ(budget.InUse(), 30u);
  { ByteBudget::Lease gone = std::move(assigned); }
  EXPECT_EQ(budget.InUse(), 0u);
}

TEST(ByteBudgetTest, ManyConcurrentLeasesNeverHoldMoreThanTheLimit) {
  constexpr size_t kLimit = 100;
  ByteBudget budget(kLimit, "--max-inflight-mb");
  std::atomic<size_t> held{0};
  std::atomic<size_t> most{0};
  std::atomic<int> granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < 500; ++i) {
        const size_t bytes = 1 + rng() % 40;
        auto lease = budget.Acquire(bytes, "call");
        if (!lease.ok()) continue;  // busy: the others hold too much now
        ++granted;
        const size_t now = held.fetch_add(bytes) + bytes;
        size_t seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::yield();  // others take leases meanwhile
        held.fetch_sub(bytes);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_LE(most.load(), kLimit);
  EXPECT_GT(granted.load(), 0);
  EXPECT_EQ(budget.InUse(), 0u);
}

}  // namespace
}  // namespace imgmcp
