#include "mcp/json_writer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>

namespace imgmcp::mcp {
namespace {

std::string Reference(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

TEST(JsonWriterTest, MatchesNlohmannOnEdgeCases) {
  const std::string long_b64(4 << 20, 'A');
  Json cases = Json::array({
      nullptr,
      true,
      false,
      0,
      -1,
      18446744073709551615ull,
      3.5,
      1e300,
      "",
      "plain",
      "quote\" backslash\\ slash/ \b\f\n\r\t",
      std::string("nul\0byte", 8),
      "\x7f del",
      "emoji 🎨 漢字",
      std::string("bad utf8 \xff\xfe end"),
      Json::object(),
      Json::array(),
      Json{{"b", 1}, {"a", {1, 2, {{"c", nullptr}}}}},
      long_b64,
      long_b64 + "\"",                   // a long string that does need escaping
      std::string(70000, 'x') + "\xc3",  // long, ends in a truncated UTF-8 sequence
  });
  for (const Json& c : cases) {
    EXPECT_EQ(DumpCompactJson(c), Reference(c)) << Reference(c).substr(0, 80);
  }
  Json message = {{"jsonrpc", "2.0"},
                  {"id", 7},
                  {"result", {{"content", {{{"type", "image"}, {"data", long_b64}}}}}}};
  EXPECT_EQ(DumpCompactJson(message), Reference(message));
}

TEST(JsonWriterTest, MatchesNlohmannOnRandomStrings) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int> byte(0, 255), len(0, 300), pick(0, 3);
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    const int n = pick(rng) == 0 ? len(rng) * 300 : len(rng);
    for (int k = 0; k < n; ++k) {
      // Mostly printable ASCII so long verbatim runs occur, sometimes anything.
      s.push_back(static_cast<char>(pick(rng) == 0 ? byte(rng) : 32 + byte(rng) % 95));
    }
    Json value = {{"s", s}, {"n", i}};
    ASSERT_EQ(DumpCompactJson(value), Reference(value)) << "case " << i;
  }
}

TEST(JsonWriterTest, MatchesNlohmannOnDoubles) {
  for (double d :
       {0.0, -0.0, 0.0336, 1.0, 1e16, 1e17, 1e-5, 5e-324, 1.7976931348623157e308,
        std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN()}) {
    const Json value = {{"usd", d}};
    EXPECT_EQ(DumpCompactJson(value), Reference(value)) << d;
  }
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> cents(0, 100);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t bits = rng();
    double any;
    std::memcpy(&any, &bits, sizeof any);
    const Json value = Json::array({any, cents(rng), static_cast<double>(i) / 7});
    ASSERT_EQ(DumpCompactJson(value), Reference(value)) << "case " << i;
  }
}

}  // namespace
}  // namespace imgmcp::mcp

#include "mcp/json_rpc.h"

namespace imgmcp::mcp {
namespace {

TEST(JsonDepthTest, TextScanCountsNestingAndSkipsStrings) {
  const std::string deep = std::string(200, '[') + std::string(200, ']');
  EXPECT_TRUE(TextNestsDeeperThan(deep, kMaxJsonNestingDepth));
  EXPECT_FALSE(TextNestsDeeperThan("{\"a\":[1,{\"b\":2}]}", kMaxJsonNestingDepth));
  const std::string in_string = "{\"s\":\"" + std::string(500, '[') + "\"}";
  EXPECT_FALSE(TextNestsDeeperThan(in_string, kMaxJsonNestingDepth));
  const std::string escaped = "{\"s\":\"\\\"" + std::string(500, '{') + "\"}";
  EXPECT_FALSE(TextNestsDeeperThan(escaped, kMaxJsonNestingDepth));
}

TEST(JsonDepthTest, ParsedCheckAgreesWithTextScan) {
  Json shallow = Json::parse(std::string(100, '[') + std::string(100, ']'));
  EXPECT_FALSE(NestsDeeperThan(shallow, kMaxJsonNestingDepth));
  Json deep = Json::array();
  for (int i = 0; i < 300; ++i) deep = Json::array({std::move(deep)});
  EXPECT_TRUE(NestsDeeperThan(deep, kMaxJsonNestingDepth));
}

// The text scan counts every value written, even one a later duplicate key replaces, so it is
// stricter than the parsed value, never looser. Found by fuzz_mcp_message.
TEST(JsonDepthTest, TextScanIsStricterThanParsedValueWithDuplicateKeys) {
  const std::string text = R"({"id":{"a":1},"id":1})";
  const Json parsed = Json::parse(text);
  EXPECT_FALSE(NestsDeeperThan(parsed, 1));
  EXPECT_TRUE(TextNestsDeeperThan(text, 1));
}

}  // namespace
}  // namespace imgmcp::mcp
