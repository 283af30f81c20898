#include "server/http/session_table.h"

#include <gtest/gtest.h>

namespace imgmcp::http {
namespace {

using std::chrono::seconds;

class FakeClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point SteadyNow() const override { return now; }
  std::chrono::system_clock::time_point WallNow() const override { return {}; }
  std::chrono::steady_clock::time_point now{};
};

struct FakeSession {
  bool busy = false;
  bool Busy() const { return busy; }
};

TEST(SessionTableTest, FindRemoveAndCapacity) {
  FakeClock clock;
  SessionTable<FakeSession> table(clock, seconds(60), 2);
  auto a = std::make_shared<FakeSession>();
  EXPECT_TRUE(table.Insert("a", a).inserted);
  EXPECT_TRUE(table.Insert("b", std::make_shared<FakeSession>()).inserted);
  EXPECT_EQ(table.Find("a"), a);
  EXPECT_EQ(table.Find("zzz"), nullptr);
  EXPECT_EQ(table.Remove("a"), a);
  EXPECT_EQ(table.Find("a"), nullptr);
  EXPECT_EQ(table.Remove("a"), nullptr);
  EXPECT_EQ(table.size(), 1u);
}

TEST(SessionTableTest, AFullTableEvictsTheLongestIdleSession) {
  FakeClock clock;
  SessionTable<FakeSession> table(clock, seconds(60), 3);
  auto a = std::make_shared<FakeSession>();
  auto b = std::make_shared<FakeSession>();
  auto c = std::make_shared<FakeSession>();
  table.Insert("a", a);
  clock.now += seconds(1);
  table.Insert("b", b);
  clock.now += seconds(1);
  table.Insert("c", c);
  clock.now += seconds(1);
  table.Find("a");  // used: now b is the longest idle
  auto d = table.Insert("d", std::make_shared<FakeSession>());
  EXPECT_TRUE(d.inserted);
  EXPECT_EQ(d.evicted, b);
  EXPECT_EQ(table.Find("b"), nullptr);
  EXPECT_EQ(table.size(), 3u);
  // Busy sessions are never evicted; a table full of them refuses.
  a->busy = c->busy = true;
  table.Find("d")->busy = true;
  auto e = table.Insert("e", std::make_shared<FakeSession>());
  EXPECT_FALSE(e.inserted);
  EXPECT_EQ(e.evicted, nullptr);
  EXPECT_EQ(table.size(), 3u);
}

TEST(SessionTableTest, ExpiresIdleSessionsOnly) {
  FakeClock clock;
  SessionTable<FakeSession> table(clock, seconds(60), 10);
  auto idle = std::make_shared<FakeSession>();
  auto used = std::make_shared<FakeSession>();
  auto busy = std::make_shared<FakeSession>();
  busy->busy = true;
  table.Insert("idle", idle);
  table.Insert("used", used);
  table.Insert("busy", busy);

  clock.now += seconds(59);
  EXPECT_TRUE(table.TakeExpired().empty());
  table.Find("used");  // activity resets its idle time
  clock.now += seconds(1);
  auto expired = table.TakeExpired();
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0], idle);
  EXPECT_EQ(table.Find("idle"), nullptr);

  clock.now += seconds(60);
  expired = table.TakeExpired();
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0], used);

  // Busy counts as activity: once no longer busy it gets a full idle period.
  busy->busy = false;
  clock.now += seconds(59);
  EXPECT_TRUE(table.TakeExpired().empty());
  clock.now += seconds(1);
  EXPECT_EQ(table.TakeExpired().size(), 1u);
  EXPECT_EQ(table.size(), 0u);
}

TEST(SessionTableTest, TakeAllEmptiesTheTable) {
  FakeClock clock;
  SessionTable<FakeSession> table(clock, seconds(60), 10);
  table.Insert("a", std::make_shared<FakeSession>());
  table.Insert("b", std::make_shared<FakeSession>());
  EXPECT_EQ(table.TakeAll().size(), 2u);
  EXPECT_EQ(table.size(), 0u);
}

}  // namespace
}  // namespace imgmcp::http
