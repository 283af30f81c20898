// TokenCache under contention (label concurrency: also runs under ThreadSanitizer): 32 callers
// with an expired token cause exactly one token request; 32 callers whose token was rejected
// (401) cause exactly one; a fresh token is reused; a failed fetch is an error naming the source.
#include "gemini_client/token_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <string>
#include <thread>
#include <vector>

namespace imgmcp::gemini {
namespace {

using std::chrono::seconds;

class ManualClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point SteadyNow() const override {
    return start_ + std::chrono::seconds(offset_.load());
  }
  std::chrono::system_clock::time_point WallNow() const override {
    return std::chrono::system_clock::now();
  }
  void Advance(seconds s) { offset_ += s.count(); }

 private:
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::atomic<int64_t> offset_{0};
};

// Issues "token-1", "token-2", … valid for an hour; counts its requests.
class CountingSource final : public TokenSource {
 public:
  explicit CountingSource(std::atomic<int>* fetches) : fetches_(fetches) {}
  Result<AccessToken> Fetch(std::stop_token, std::chrono::steady_clock::time_point) override {
    const int n = ++*fetches_;
    if (fail_) return MakeError(ErrorCode::kPermissionDenied, "refused (test)");
    return AccessToken{"token-" + std::to_string(n), life_};
  }
  std::string Describe() const override { return "counting source"; }
  std::vector<std::string> Secrets() const override { return {"refresh-secret"}; }
  bool fail_ = false;
  seconds life_{3600};

 private:
  std::atomic<int>* const fetches_;
};

constexpr auto kNoDeadline = std::chrono::steady_clock::time_point::max();
constexpr int kCallers = 32;

// Runs `kCallers` threads that start together and each calls `body`; joins them.
template <typename Body>
void RunTogether(Body body) {
  std::latch start(kCallers);
  std::vector<std::thread> threads;
  for (int i = 0; i < kCallers; ++i) {
    threads.emplace_back([&start, &body] {
      start.arrive_and_wait();
      body();
    });
  }
  for (auto& t : threads) t.join();
}

TEST(TokenCacheTest, FreshTokenIsReusedAndRefreshedBeforeExpiry) {
  std::atomic<int> fetches{0};
  ManualClock clock;
  TokenCache cache(std::make_unique<CountingSource>(&fetches), &clock);
  EXPECT_EQ(*cache.Credential({}, kNoDeadline), "Bearer token-1");
  clock.Advance(seconds(3000));
  EXPECT_EQ(*cache.Credential({}, kNoDeadline), "Bearer token-1");
  clock.Advance(seconds(400));  // 200 s left: inside the refresh margin
  EXPECT_EQ(*cache.Credential({}, kNoDeadline), "Bearer token-2");
  EXPECT_EQ(fetches.load(), 2);
}

TEST(TokenCacheTest, ThirtyTwoCallersWithAnExpiredTokenCauseOneTokenRequest) {
  std::atomic<int> fetches{0};
  ManualClock clock;
  TokenCache cache(std::make_unique<CountingSource>(&fetches), &clock);
  ASSERT_TRUE(cache.Credential({}, kNoDeadline).ok());
  clock.Advance(seconds(3600));  // expired
  std::atomic<int> token2{0};
  RunTogether([&] {
    auto c = cache.Credential({}, kNoDeadline);
    if (c.ok() && *c == "Bearer token-2") ++token2;
  });
  EXPECT_EQ(fetches.load(), 2);
  EXPECT_EQ(token2.load(), kCallers);
  EXPECT_EQ(cache.FetchCount(), 2u);
}

TEST(TokenCacheTest, ThirtyTwoCallersRejectedWithOneTokenCauseOneTokenRequest) {
  std::atomic<int> fetches{0};
  TokenCache cache(std::make_unique<CountingSource>(&fetches));
  const std::string first = *cache.Credential({}, kNoDeadline);
  std::atomic<int> fresh{0};
  RunTogether([&] {
    EXPECT_TRUE(cache.Rejected(first));
    auto c = cache.Credential({}, kNoDeadline);
    if (c.ok() && *c == "Bearer token-2") ++fresh;
  });
  EXPECT_EQ(fetches.load(), 2);
  EXPECT_EQ(fresh.load(), kCallers);
}

TEST(TokenCacheTest, AFailedFetchIsAnErrorAndTheNextCallTriesAgain) {
  std::atomic<int> fetches{0};
  auto source = std::make_unique<CountingSource>(&fetches);
  CountingSource* raw = source.get();
  TokenCache cache(std::move(source));
  raw->fail_ = true;
  auto c = cache.Credential({}, kNoDeadline);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, ErrorCode::kPermissionDenied);
  raw->fail_ = false;
  EXPECT_EQ(*cache.Credential({}, kNoDeadline), "Bearer token-2");
  EXPECT_EQ(cache.Describe(), "counting source");
}

// A lifetime no source should hand over (the token answer's parser clamps it already) is
// clamped again: the refresh time cannot overflow, and the token is reused.
TEST(TokenCacheTest, AnOutOfRangeLifetimeIsClampedAndTheTokenReused) {
  for (const seconds life : {seconds::max(), seconds::min(), seconds(-5), seconds(0)}) {
    std::atomic<int> fetches{0};
    auto source = std::make_unique<CountingSource>(&fetches);
    source->life_ = life;
    ManualClock clock;
    TokenCache cache(std::move(source), &clock);
    EXPECT_EQ(*cache.Credential({}, kNoDeadline), "Bearer token-1") << life.count();
    clock.Advance(seconds(20));
    EXPECT_EQ(*cache.Credential({}, kNoDeadline), "Bearer token-1") << life.count();
    EXPECT_EQ(fetches.load(), 1) << life.count();
  }
}

TEST(TokenCacheTest, TheLatestTokensAndTheSourcesSecretsAreToBeScrubbed) {
  std::atomic<int> fetches{0};
  TokenCache cache(std::make_unique<CountingSource>(&fetches));
  EXPECT_EQ(cache.SecretsToScrub(), std::vector<std::string>{"refresh-secret"});
  for (size_t i = 0; i < kRememberedTokens + 2; ++i) {
    const std::string credential = *cache.Credential({}, kNoDeadline);
    cache.Rejected(credential);
  }
  std::vector<std::string> expected = {"refresh-secret"};
  for (size_t n = 3; n <= kRememberedTokens + 2; ++n)
    expected.push_back("token-" + std::to_string(n));
  EXPECT_EQ(cache.SecretsToScrub(), expected);
}

}  // namespace
}  // namespace imgmcp::gemini
