#include "server/tools/arguments.h"

#include <gtest/gtest.h>

#include <vector>

#include "server/tools/uris.h"
#include "session/version_rules.h"

namespace imgmcp::tools {
namespace {

// The rule itself is session::IsValidSessionId's (tests/unit/session/data_dir_test.cpp); tools
// refuse with the store's own message, naming the field.
TEST(SessionIdTest, ToolsRefuseWithTheStoresRuleAndMessage) {
  EXPECT_TRUE(ValidateSessionId("A-b_c.9").ok());
  EXPECT_TRUE(ValidateSessionId(std::string(64, 'x')).ok());
  for (const std::string& bad : std::vector<std::string>{"", ".a", "-a", "a b", "a/b", "..", "a\\b",
                                                         "é", std::string(65, 'x')}) {
    Status st = ValidateSessionId(bad, "from_session");
    ASSERT_FALSE(st.ok()) << bad;
    EXPECT_EQ(st.error().message, session::InvalidSessionIdError(bad, "from_session").message);
  }
}

TEST(UrisTest, BuildAndParse) {
  EXPECT_EQ(VersionUri("s1", 3), "imgmcp://sessions/s1/versions/3");
  auto v = ParseSessionUri("imgmcp://sessions/s1/versions/3");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->session_id, "s1");
  EXPECT_EQ(*v->version, 3);
  auto m = ParseSessionUri("imgmcp://sessions/s1");
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->version.has_value());
  for (const char* bad :
       {"imgmcp://sessions/../x", "imgmcp://sessions/s1/versions/0",
        "imgmcp://sessions/s1/versions/-1", "imgmcp://sessions/s1/versions/2x",
        "imgmcp://sessions/s1/other/2", "file:///etc/passwd", "imgmcp://sessions/"}) {
    EXPECT_FALSE(ParseSessionUri(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace imgmcp::tools
