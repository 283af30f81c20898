#include "server/tools/arguments.h"

#include <gtest/gtest.h>

#include <vector>

#include "server/tools/uris.h"
#include "session/version_rules.h"

namespace imgmcp::tools {
namespace {

TEST(ArgumentReaderTest, ReadsTypedFieldsAndRejectsUnknownOnes) {
  Json args = {{"prompt", "hi"}, {"version", 3}, {"flag", true}, {"mode", "full"}};
  ArgumentReader r(args);
  EXPECT_EQ(*r.RequiredString("prompt", 10), "hi");
  EXPECT_EQ(**r.OptionalInteger("version", 1, 5), 3);
  EXPECT_EQ(**r.OptionalBool("flag"), true);
  EXPECT_EQ(**r.OptionalEnum("mode", {"preview", "full"}), "full");
  EXPECT_TRUE(r.Finish().ok());

  Json extra = {{"prompt", "hi"}, {"colour", "red"}};
  ArgumentReader r2(extra);
  ASSERT_TRUE(r2.RequiredString("prompt", 10).ok());
  Status s = r2.Finish();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("unknown field 'colour'"), std::string::npos);
  EXPECT_NE(s.error().message.find("prompt"), std::string::npos);
}

TEST(ArgumentReaderTest, NamesTheFieldAndWhatIsAllowed) {
  Json args = {{"prompt", 5}, {"version", 0}, {"big", 2.5}, {"mode", "x"}, {"long", "abcdef"}};
  ArgumentReader r(args, "image");
  auto p = r.RequiredString("prompt", 10);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message, "'image.prompt' must be a string, got integer");
  auto v = r.OptionalInteger("version", 1, 9);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("from 1 to 9"), std::string::npos);
  EXPECT_FALSE(r.OptionalInteger("big", 0, 9).ok());
  auto m = r.OptionalEnum("mode", {"preview", "full"});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("\"preview\", \"full\""), std::string::npos);
  auto noted = r.OptionalEnum("mode", {"preview", "full"}, [](const std::string& value) {
    return "Only these two here, not " + value;
  });
  ASSERT_FALSE(noted.ok());
  EXPECT_NE(
      noted.error().message.find("allowed: \"preview\", \"full\". Only these two here, not x"),
      std::string::npos)
      << noted.error().message;
  auto silent = r.OptionalEnum("mode", {"preview", "full"}, [](const std::string&) { return ""; });
  ASSERT_FALSE(silent.ok());
  EXPECT_EQ(silent.error().message.substr(silent.error().message.size() - 6), "\"full\"")
      << silent.error().message;
  EXPECT_FALSE(r.OptionalString("long", 3).ok());
  EXPECT_FALSE(r.RequiredString("missing", 3).ok());
}

TEST(ArgumentReaderTest, ANulInTextIsRefusedNamingTheFieldNeverCut) {
  Json args = {{"prompt", std::string("keep\0 this", 10)}, {"other", "fine"}};
  ArgumentReader r(args, "image");
  auto p = r.RequiredString("prompt", 100);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(p.error().message,
            "'image.prompt' contains a NUL character (\\u0000) at byte 4; remove it");
  EXPECT_EQ(*r.RequiredString("other", 100), "fine");
}

TEST(ArgumentReaderTest, AcceptsWholeFloatsAsIntegersAndNullAsAbsent) {
  Json args = {{"n", 4.0}, {"gone", nullptr}};
  ArgumentReader r(args);
  EXPECT_EQ(**r.OptionalInteger("n", 0, 9), 4);
  EXPECT_FALSE(r.OptionalString("gone", 9)->has_value());
}

// A float beyond int64 was converted before it was range-checked (undefined behaviour, found by
// fuzz_tool_arguments). Every such number is refused as out of range, naming the field.
TEST(ArgumentReaderTest, HugeFloatsAreOutOfRangeNotConverted) {
  for (double huge : {4e42, -4e42, 9.3e18, -9.3e18, 1e300}) {
    Json args = {{"to_version", huge}};
    ArgumentReader r(args);
    auto v = r.OptionalInteger("to_version", 1, 100);
    ASSERT_FALSE(v.ok()) << huge;
    EXPECT_NE(v.error().message.find("'to_version' is out of range (allowed: an integer from 1 to "
                                     "100)"),
              std::string::npos)
        << v.error().message;
  }
}

TEST(ArgumentReaderTest, RejectsNonObjects) {
  ArgumentReader r(Json::array());
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.Finish().ok());
}

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
