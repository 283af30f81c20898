#include "common/json_reader.h"

#include <gtest/gtest.h>

#include <string>

namespace imgmcp {
namespace {

TEST(JsonObjectReaderTest, ReadsTypedFieldsAndRejectsUnknownOnes) {
  Json args = {{"prompt", "hi"}, {"version", 3}, {"flag", true}, {"mode", "full"}};
  JsonObjectReader r(args);
  EXPECT_EQ(*r.RequiredString("prompt", 10), "hi");
  EXPECT_EQ(**r.OptionalInteger("version", 1, 5), 3);
  EXPECT_EQ(**r.OptionalBool("flag"), true);
  EXPECT_EQ(**r.OptionalEnum("mode", {"preview", "full"}), "full");
  EXPECT_TRUE(r.Finish().ok());

  Json extra = {{"prompt", "hi"}, {"colour", "red"}};
  JsonObjectReader r2(extra);
  ASSERT_TRUE(r2.RequiredString("prompt", 10).ok());
  Status s = r2.Finish();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("unknown field 'colour'"), std::string::npos);
  EXPECT_NE(s.error().message.find("prompt"), std::string::npos);
}

TEST(JsonObjectReaderTest, NamesTheFieldAndWhatIsAllowed) {
  Json args = {{"prompt", 5}, {"version", 0}, {"big", 2.5}, {"mode", "x"}, {"long", "abcdef"}};
  JsonObjectReader r(args, "image");
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

TEST(JsonObjectReaderTest, ANulInTextIsRefusedNamingTheFieldNeverCut) {
  Json args = {{"prompt", std::string("keep\0 this", 10)}, {"other", "fine"}};
  JsonObjectReader r(args, "image");
  auto p = r.RequiredString("prompt", 100);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(p.error().message,
            "'image.prompt' contains a NUL character (\\u0000) at byte 4; remove it");
  EXPECT_EQ(*r.RequiredString("other", 100), "fine");
}

TEST(JsonObjectReaderTest, AcceptsWholeFloatsAsIntegersAndNullAsAbsent) {
  Json args = {{"n", 4.0}, {"gone", nullptr}};
  JsonObjectReader r(args);
  EXPECT_EQ(**r.OptionalInteger("n", 0, 9), 4);
  EXPECT_FALSE(r.OptionalString("gone", 9)->has_value());
}

// A float beyond int64 was converted before it was range-checked (undefined behaviour, found by
// fuzz_tool_arguments). Every such number is refused as out of range, naming the field.
TEST(JsonObjectReaderTest, HugeFloatsAreOutOfRangeNotConverted) {
  for (double huge : {4e42, -4e42, 9.3e18, -9.3e18, 1e300}) {
    Json args = {{"to_version", huge}};
    JsonObjectReader r(args);
    auto v = r.OptionalInteger("to_version", 1, 100);
    ASSERT_FALSE(v.ok()) << huge;
    EXPECT_NE(v.error().message.find("'to_version' is out of range (allowed: an integer from 1 to "
                                     "100)"),
              std::string::npos)
        << v.error().message;
  }
}

TEST(JsonObjectReaderTest, RejectsNonObjects) {
  JsonObjectReader r(Json::array());
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.Finish().ok());
}

// What mcp/protocol.cpp reads request params with: a member as sent, absent and null alike, and
// nothing at all in a value that is no object.
TEST(JsonObjectReaderTest, RawValuesTreatNullAsAbsent) {
  Json args = {{"caps", {{"x", 1}}}, {"list", Json::array()}, {"none", nullptr}};
  JsonObjectReader r(args, "params");
  const Json* caps = r.OptionalValue("caps");
  ASSERT_NE(caps, nullptr);
  EXPECT_EQ((*caps)["x"], 1);
  ASSERT_NE(r.OptionalValue("list"), nullptr);
  EXPECT_TRUE(r.OptionalValue("list")->is_array());
  EXPECT_EQ(r.OptionalValue("none"), nullptr);
  EXPECT_EQ(r.OptionalValue("absent"), nullptr);
  EXPECT_TRUE(r.IsNull("none"));
  EXPECT_FALSE(r.IsNull("absent"));
  EXPECT_TRUE(r.Finish().ok());  // each was asked for

  const Json not_an_object = Json::array({1, 2});
  JsonObjectReader none(not_an_object, "params");
  EXPECT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "params must be an object, got array");
  EXPECT_EQ(none.OptionalValue("0"), nullptr);
}

TEST(JsonObjectReaderTest, TypeNames) {
  EXPECT_EQ(JsonTypeName(Json()), "null");
  EXPECT_EQ(JsonTypeName(Json(true)), "boolean");
  EXPECT_EQ(JsonTypeName(Json(-3)), "integer");
  EXPECT_EQ(JsonTypeName(Json(3u)), "integer");
  EXPECT_EQ(JsonTypeName(Json(2.5)), "number");
  EXPECT_EQ(JsonTypeName(Json("s")), "string");
  EXPECT_EQ(JsonTypeName(Json::array()), "array");
  EXPECT_EQ(JsonTypeName(Json::object()), "object");
}

TEST(MemberTextTest, FindsTopLevelMembersOnly) {
  const std::string text =
      R"( { "turn" : {"params":{"model":"no"},"s":"}{\"]"}, "list":[1,[2,{"params":3}]],)"
      R"( "n": -1.5e3 , "params" :{"model":"m"} , "last":true})";
  EXPECT_EQ(MemberText(text, "params"), R"({"model":"m"})");
  EXPECT_EQ(MemberText(text, "turn"), R"({"params":{"model":"no"},"s":"}{\"]"})");
  EXPECT_EQ(MemberText(text, "list"), R"([1,[2,{"params":3}]])");
  EXPECT_EQ(MemberText(text, "n"), "-1.5e3");
  EXPECT_EQ(MemberText(text, "last"), "true");
  EXPECT_EQ(MemberText(text, "model"), std::nullopt);  // nested only
  EXPECT_EQ(MemberText(R"({"a":"x\"params\"","b":1})", "params"), std::nullopt);
}

TEST(MemberTextTest, AnythingButAnObjectHasNoMembers) {
  for (const char* text : {"", "{}", "[1]", "not json", R"("params")", R"({"params")",
                           R"({"params":)", R"({"params":{"open":1)", R"({"a":1 "params":2})"}) {
    EXPECT_EQ(MemberText(text, "params"), std::nullopt) << text;
  }
}

}  // namespace
}  // namespace imgmcp
