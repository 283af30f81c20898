// The batch poll schedule (gemini_client/batch_poll.h): doubling from --batch-poll to 10 minutes,
// jittered within ±10 %, and the poll traffic a job can cause, stated as a number.
#include "gemini_client/batch_poll.h"

#include <gtest/gtest.h>

namespace imgmcp::gemini {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(BatchPollTest, IntervalsDoubleFromTheFirstUpToTenMinutes) {
  const double middle = 0.5;  // no jitter
  EXPECT_EQ(BatchPollInterval(seconds(30), 0, middle), seconds(30));
  EXPECT_EQ(BatchPollInterval(seconds(30), 1, middle), seconds(60));
  EXPECT_EQ(BatchPollInterval(seconds(30), 4, middle), seconds(480));
  EXPECT_EQ(BatchPollInterval(seconds(30), 5, middle), minutes(10));
  EXPECT_EQ(BatchPollInterval(seconds(30), 1000, middle), minutes(10));
  EXPECT_EQ(BatchPollInterval(hours(1), 0, middle), minutes(10)) << "the cap holds the first too";
  EXPECT_EQ(BatchPollInterval(milliseconds(0), 0, middle), milliseconds(1));
}

TEST(BatchPollTest, JitterStaysWithinATenthEitherWay) {
  EXPECT_EQ(BatchPollInterval(seconds(100), 0, 0.0), seconds(90));
  EXPECT_EQ(BatchPollInterval(seconds(100), 0, 0.999999), milliseconds(109'999));
  for (double u = 0; u < 1; u += 0.01) {
    const milliseconds wait = BatchPollInterval(minutes(10), 3, u);
    EXPECT_GE(wait, minutes(9));
    EXPECT_LE(wait, minutes(11));
  }
}

// The poll traffic of one job at the defaults, every wait at its shortest: at most 10 reads in its
// first hour, 6 in the second, 163 in a day (no later hour holds more than 7: 9-minute waits).
TEST(BatchPollTest, ThePollTrafficOfAJobIsBounded) {
  EXPECT_EQ(MaxBatchReads(seconds(30), hours(1)), 10);
  EXPECT_EQ(MaxBatchReads(seconds(30), hours(2)) - MaxBatchReads(seconds(30), hours(1)), 6);
  EXPECT_EQ(MaxBatchReads(seconds(30), hours(24)), 163);
  EXPECT_EQ(MaxBatchReads(seconds(30), seconds(26)), 0) << "nothing before the first interval";
}

}  // namespace
}  // namespace imgmcp::gemini
