// ByteBudget: leases never hold more than the limit together; one that does not fit is refused at
// once (busy, or larger than the whole budget) with the sizes and the flag; ending a lease gives
// its bytes back.
#include "common/byte_budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <random>
#include <string>
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
            "this edit_image call needs about 300 MB of memory while it runs, more than the "
            "whole --max-inflight-mb budget (100 MB) allows, so it cannot run even alone; send "
            "fewer or smaller images, ask for a smaller image_size, or raise --max-inflight-mb");
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

TEST(ByteBudgetTest, AnExtendedLeaseIsJudgedWithWhatItHoldsAlready) {
  ByteBudget budget(100 * kMB, "--max-inflight-mb");
  auto lease = budget.Acquire(60 * kMB, "this generate_image call");
  ASSERT_TRUE(lease.ok());
  // 60 + 50 MB exceed the whole budget though 50 MB alone would not: no retry can help.
  Status grown = lease->Extend(50 * kMB, "this generate_image call (making a 4096x4096 image)");
  ASSERT_FALSE(grown.ok());
  EXPECT_EQ(grown.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(grown.error().message,
            "this generate_image call (making a 4096x4096 image) needs about 110 MB of memory "
            "while it runs, more than the whole --max-inflight-mb budget (100 MB) allows, so it "
            "cannot run even alone; send fewer or smaller images, ask for a smaller image_size, "
            "or raise --max-inflight-mb");
  EXPECT_EQ(lease->bytes(), 60 * kMB);  // a refusal leaves the lease as it was
  EXPECT_EQ(budget.InUse(), 60 * kMB);
  ASSERT_TRUE(lease->Extend(40 * kMB, "this generate_image call").ok());
  EXPECT_EQ(lease->bytes(), 100 * kMB);
  EXPECT_EQ(budget.InUse(), 100 * kMB);
  { ByteBudget::Lease gone = std::move(*lease); }
  EXPECT_EQ(budget.InUse(), 0u);  // all of it given back at once
}

TEST(ByteBudgetTest, AnExtensionThatDoesNotFitBesideOthersIsBusy) {
  ByteBudget budget(100 * kMB, "--max-inflight-mb");
  auto other = budget.Acquire(50 * kMB, "another call");
  ASSERT_TRUE(other.ok());
  auto lease = budget.Acquire(0, "this edit_image call");  // nothing read yet
  ASSERT_TRUE(lease.ok());
  Status grown = lease->Extend(60 * kMB, "this edit_image call");
  ASSERT_FALSE(grown.ok());
  EXPECT_EQ(grown.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(grown.error().message,
            "busy: calls in flight hold 50 MB of the 100 MB imgmcp may use for images "
            "(--max-inflight-mb) and this edit_image call needs about 60 MB; retry when one of "
            "them has finished");
  ASSERT_TRUE(lease->Extend(10 * kMB, "this edit_image call").ok());
  grown = lease->Extend(45 * kMB, "this edit_image call");
  ASSERT_FALSE(grown.ok());
  EXPECT_NE(grown.error().message.find("needs about 45 MB more;"), std::string::npos)
      << grown.error().message;
  EXPECT_EQ(budget.InUse(), 60 * kMB);
}

TEST(ByteBudgetTest, LeasesOfAnUnlimitedBudgetOrNoneGrowFreely) {
  ByteBudget budget(0, "--max-inflight-mb");
  auto lease = budget.Acquire(size_t{1} << 40, "a");
  ASSERT_TRUE(lease.ok());
  EXPECT_TRUE(lease->Extend(size_t{1} << 40, "a").ok());
  EXPECT_EQ(lease->bytes(), size_t{2} << 40);
  ByteBudget::Lease none;
  EXPECT_TRUE(none.Extend(5, "b").ok());
  EXPECT_EQ(budget.InUse(), 0u);
}

TEST(ByteBudgetTest, AfterALargeLeaseEndsTheBudgetTrimsOnceItIsQuiet) {
  std::mutex mu;  // guards trims
  std::condition_variable trimmed;
  int trims = 0;
  ByteBudget::Trim trim;
  trim.run = [&] {
    std::lock_guard lock(mu);
    ++trims;
    trimmed.notify_all();
  };
  trim.quiet = std::chrono::milliseconds(10);
  ByteBudget budget(1024 * kMB, "--max-inflight-mb", trim);
  for (int round = 1; round <= 2; ++round) {
    {
      auto large = budget.Acquire(kTrimAfterBytes, "a large call");
      ASSERT_TRUE(large.ok());
    }
    std::unique_lock lock(mu);
    ASSERT_TRUE(trimmed.wait_for(lock, std::chrono::seconds(20), [&] { return trims == round; }))
        << "no trim after round " << round;
  }
}

TEST(ByteBudgetTest, ABudgetWithATrimDueStopsAtOnce) {
  ByteBudget::Trim trim;
  trim.run = [] { ADD_FAILURE() << "trimmed before it was quiet for an hour"; };
  trim.quiet = std::chrono::hours(1);
  ByteBudget budget(1024 * kMB, "--max-inflight-mb", trim);
  auto large = budget.Acquire(64 * kMB, "a large call");
  ASSERT_TRUE(large.ok());
  { ByteBudget::Lease gone = std::move(*large); }
  // The destructor stops the thread waiting for the quiet hour (or this test times out).
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
