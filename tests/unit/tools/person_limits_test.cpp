// PersonLimits (person_limits.h) on a real SQLite store and a fake wall clock: calls in flight
// counted per person and given back with the permit; calls per minute counted in the store per
// person, refused past the limit until the next window, with when to try again; a refusal names
// its flag.
#include "server/tools/person_limits.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>

#include "session/sqlite/sqlite_session_store.h"

namespace imgmcp::tools {
namespace {

class SteppingClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point SteadyNow() const override {
    return std::chrono::steady_clock::now();
  }
  std::chrono::system_clock::time_point WallNow() const override {
    return std::chrono::system_clock::time_point(std::chrono::milliseconds(ms_.load()));
  }
  void Set(int64_t ms) { ms_ = ms; }

 private:
  std::atomic<int64_t> ms_{1'800'000'000'000};  // a whole minute: 30'000'000 min
};

class PersonLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("imgmcp-limits-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    session::StoreOptions options;
    options.data_dir = dir_;
    auto opened = session::sqlite::SqliteSessionStore::Open(options, clock_);
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    store_ = std::move(*opened);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  static mcp::Caller Person(const std::string& principal) {
    mcp::Caller caller;
    caller.principal = principal;
    return caller;
  }

  std::filesystem::path dir_;
  SteppingClock clock_;
  std::unique_ptr<session::SessionStore> store_;
};

TEST_F(PersonLimitsTest, CallsInFlightAreCountedPerPersonAndGivenBackWithThePermit) {
  PersonLimits limits(*store_, clock_, {.max_in_flight = 2});
  mcp::CallPermit first = limits.Admit(Person("a11ce"), "edit_image");
  mcp::CallPermit second = limits.Admit(Person("a11ce"), "edit_image");
  ASSERT_FALSE(first.refusal);
  ASSERT_FALSE(second.refusal);
  mcp::CallPermit third = limits.Admit(Person("a11ce"), "get_image");
  ASSERT_TRUE(third.refusal);
  EXPECT_EQ(third.refusal->limit, "--max-calls-per-user");
  EXPECT_NE(third.refusal->message.find("2 tool calls in flight"), std::string::npos)
      << third.refusal->message;
  EXPECT_EQ(third.refusal->retry_after_seconds, 1);
  EXPECT_FALSE(limits.Admit(Person("b0b"), "get_image").refusal);  // another person
  first.held.reset();                                              // a call ends
  EXPECT_FALSE(limits.Admit(Person("a11ce"), "get_image").refusal);
}

TEST_F(PersonLimitsTest, CallsPerMinuteAreCountedInTheStoreUntilTheNextWindow) {
  PersonLimits limits(*store_, clock_, {.calls_per_minute = 3});
  clock_.Set(1'800'000'000'000 + 45'500);  // 14.5 s before the next window
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(limits.Admit(Person(""), "get_image").refusal);
  mcp::CallPermit refused = limits.Admit(Person(""), "get_image");
  ASSERT_TRUE(refused.refusal);
  EXPECT_EQ(refused.refusal->limit, "--rate-limit-per-user");
  EXPECT_EQ(refused.refusal->retry_after_seconds, 15);
  EXPECT_NE(refused.refusal->message.find("--rate-limit-per-user 3/min"), std::string::npos)
      << refused.refusal->message;
  // A second limiter on the same store (another process or replica) counts with it.
  PersonLimits other(*store_, clock_, {.calls_per_minute = 3});
  EXPECT_TRUE(other.Admit(Person(""), "get_image").refusal);
  EXPECT_FALSE(other.Admit(Person("b0b"), "get_image").refusal);  // someone else's minute
  clock_.Set(1'800'000'000'000 + 60'000);                         // the next window
  EXPECT_FALSE(limits.Admit(Person(""), "get_image").refusal);
}

TEST_F(PersonLimitsTest, ACallRefusedByTheRateIsNotLeftInFlight) {
  PersonLimits limits(*store_, clock_, {.max_in_flight = 1, .calls_per_minute = 1});
  mcp::CallPermit first = limits.Admit(Person("a11ce"), "get_image");
  ASSERT_FALSE(first.refusal);
  first.held.reset();
  mcp::CallPermit refused = limits.Admit(Person("a11ce"), "get_image");
  ASSERT_TRUE(refused.refusal);
  EXPECT_EQ(refused.refusal->limit, "--rate-limit-per-user");
  EXPECT_EQ(refused.held, nullptr);
  clock_.Set(1'800'000'000'000 + 60'000);
  // Had the refused call stayed in flight, the in-flight limit would refuse this one.
  EXPECT_FALSE(limits.Admit(Person("a11ce"), "get_image").refusal);
}

}  // namespace
}  // namespace imgmcp::tools
