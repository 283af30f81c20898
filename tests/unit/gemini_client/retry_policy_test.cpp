#include "gemini_client/retry_policy.h"

#include <gtest/gtest.h>

namespace imgmcp::gemini {
namespace {

using std::chrono::milliseconds;

TEST(RetryPolicyTest, RetryableStatusesAreExactlyTheDocumentedOnes) {
  for (int s : {408, 429, 500, 502, 503, 504}) EXPECT_TRUE(IsRetryableHttpStatus(s)) << s;
  for (int s : {200, 400, 401, 402, 403, 404, 409, 413, 501, 505}) {
    EXPECT_FALSE(IsRetryableHttpStatus(s)) << s;
  }
}

TEST(RetryPolicyTest, ParsesProtobufDurations) {
  EXPECT_EQ(ParseProtoDuration("47s"), milliseconds(47000));
  EXPECT_EQ(ParseProtoDuration("1.203608125s"), milliseconds(1204));  // rounded up
  EXPECT_EQ(ParseProtoDuration("0.5s"), milliseconds(500));
  EXPECT_EQ(ParseProtoDuration("0s"), milliseconds(0));
  EXPECT_EQ(ParseProtoDuration("2.000000001s"), milliseconds(2001));
  for (const char* bad : {"", "s", "1", "1.2", "-1s", "1.s", ".5s", "1.0000000001s", "abc", "1 s",
                          "1e3s", "99999999999999999999s"}) {
    EXPECT_FALSE(ParseProtoDuration(bad).has_value()) << bad;
  }
}

TEST(RetryPolicyTest, BackoffDoublesUpToTheCapAndJitterOnlyAdds) {
  RetryPolicyOptions o;
  EXPECT_EQ(BackoffDelay(0, o, 0.0), milliseconds(1000));
  EXPECT_EQ(BackoffDelay(1, o, 0.0), milliseconds(2000));
  EXPECT_EQ(BackoffDelay(2, o, 0.0), milliseconds(4000));
  EXPECT_EQ(BackoffDelay(5, o, 0.0), milliseconds(32000));
  EXPECT_EQ(BackoffDelay(6, o, 0.0), milliseconds(60000));
  EXPECT_EQ(BackoffDelay(100, o, 0.0), milliseconds(60000));
  const auto jittered = BackoffDelay(2, o, 0.999);
  EXPECT_GE(jittered, milliseconds(4000));
  EXPECT_LE(jittered, milliseconds(5000));
}

TEST(RetryPolicyTest, TransientFailuresRetryUntilMaxAttempts) {
  RetryPolicyOptions o;
  o.jitter_fraction = 0;
  AttemptFailure f{FailureKind::kTransient, 503, std::nullopt, false};
  for (int attempts = 1; attempts < 5; ++attempts) {
    auto d = DecideRetry(f, attempts, false, o, 0.5);
    EXPECT_TRUE(d.retry) << attempts;
    EXPECT_EQ(d.delay, milliseconds(1000 << (attempts - 1)));
  }
  auto last = DecideRetry(f, 5, false, o, 0.5);
  EXPECT_FALSE(last.retry);
  EXPECT_EQ(last.why_not, "gave up after 5 attempts");
}

TEST(RetryPolicyTest, RetryInfoDelayIsAFloorFor429) {
  RetryPolicyOptions o;
  AttemptFailure f{FailureKind::kTransient, 429, milliseconds(7500), false};
  auto d = DecideRetry(f, 1, false, o, 0.9);
  EXPECT_TRUE(d.retry);
  EXPECT_EQ(d.delay, milliseconds(7500));
  f.retry_delay = milliseconds(10);  // shorter than the backoff: the backoff wins
  EXPECT_GE(DecideRetry(f, 3, false, o, 0.0).delay, milliseconds(4000));
}

TEST(RetryPolicyTest, DailyQuotaAndLongServerDelaysAreTerminal) {
  RetryPolicyOptions o;
  AttemptFailure daily{FailureKind::kTransient, 429, milliseconds(1000), true};
  auto d = DecideRetry(daily, 1, false, o, 0);
  EXPECT_FALSE(d.retry);
  EXPECT_NE(d.why_not.find("daily quota"), std::string::npos);
  AttemptFailure long_wait{FailureKind::kTransient, 429, milliseconds(301'000), false};
  d = DecideRetry(long_wait, 1, false, o, 0);
  EXPECT_FALSE(d.retry);
  EXPECT_NE(d.why_not.find("301 s"), std::string::npos);
  long_wait.retry_delay = milliseconds(300'000);  // exactly the limit still waits
  EXPECT_TRUE(DecideRetry(long_wait, 1, false, o, 0).retry);
}

TEST(RetryPolicyTest, RetryOnceFailuresRetryExactlyOnce) {
  RetryPolicyOptions o;
  AttemptFailure f{FailureKind::kRetryOnce, 200, std::nullopt, false};
  EXPECT_TRUE(DecideRetry(f, 1, false, o, 0).retry);
  EXPECT_FALSE(DecideRetry(f, 2, true, o, 0).retry);
  o.max_attempts = 1;
  EXPECT_FALSE(DecideRetry(f, 1, false, o, 0).retry);
}

TEST(RetryPolicyTest, TerminalFailuresNeverRetry) {
  RetryPolicyOptions o;
  for (int s : {400, 402, 403, 404}) {
    AttemptFailure f{FailureKind::kTerminal, s, std::nullopt, false};
    auto d = DecideRetry(f, 1, false, o, 0);
    EXPECT_FALSE(d.retry);
    EXPECT_TRUE(d.why_not.empty());
  }
}

TEST(RetryPolicyTest, FormatsDelaysForPeople) {
  EXPECT_EQ(FormatDelay(milliseconds(250)), "250 ms");
  EXPECT_EQ(FormatDelay(milliseconds(4000)), "4 s");
  EXPECT_EQ(FormatDelay(milliseconds(1204)), "1.3 s");
  EXPECT_EQ(FormatDelay(milliseconds(1200)), "1.2 s");
  EXPECT_EQ(FormatDelay(milliseconds(47434)), "48 s");
  EXPECT_EQ(FormatDelay(milliseconds(2000)), "2 s");
}

}  // namespace
}  // namespace imgmcp::gemini
