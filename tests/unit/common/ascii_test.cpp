#include "common/ascii.h"

#include <gtest/gtest.h>

#include <string>

namespace imgmcp {
namespace {

TEST(AsciiTest, LowerMapsOnlyAsciiLetters) {
  EXPECT_EQ(AsciiLower("Content-TYPE: Image/PNG 42"), "content-type: image/png 42");
  EXPECT_EQ(AsciiLower("\xC3\x89t\xC3\xA9"), "\xC3\x89t\xC3\xA9");  // UTF-8 bytes unchanged
  EXPECT_EQ(AsciiLower(""), "");
}

TEST(AsciiTest, EqualsIgnoreCaseComparesWholeStrings) {
  EXPECT_TRUE(EqualsIgnoreAsciiCase("Transfer-Encoding", "transfer-encoding"));
  EXPECT_TRUE(EqualsIgnoreAsciiCase("", ""));
  EXPECT_FALSE(EqualsIgnoreAsciiCase("chunked", "chunked "));
  EXPECT_FALSE(EqualsIgnoreAsciiCase("close", "clos"));
  EXPECT_FALSE(EqualsIgnoreAsciiCase("[", "{"));  // 0x5B and 0x7B differ by 32 but are not letters
}

TEST(AsciiTest, TrimRemovesSpacesAndTabsAtBothEnds) {
  EXPECT_EQ(TrimSpacesAndTabs(" \t value with space\t "), "value with space");
  EXPECT_EQ(TrimSpacesAndTabs("\r\nvalue"), "\r\nvalue");  // only HTTP's optional whitespace
  EXPECT_EQ(TrimSpacesAndTabs(" \t "), "");
}

TEST(AsciiTest, CharMappingsTouchOnlyLetters) {
  EXPECT_EQ(ToAsciiLower('Q'), 'q');
  EXPECT_EQ(ToAsciiLower('q'), 'q');
  EXPECT_EQ(ToAsciiLower('@'), '@');  // 0x40, just below 'A'
  EXPECT_EQ(ToAsciiLower('['), '[');  // 0x5B, just above 'Z'
  EXPECT_EQ(ToAsciiUpper('a'), 'A');
  EXPECT_EQ(ToAsciiUpper('`'), '`');  // 0x60, just below 'a'
  EXPECT_EQ(ToAsciiUpper('{'), '{');  // 0x7B, just above 'z'
  EXPECT_EQ(ToAsciiUpper('\xE9'), '\xE9');
}

TEST(AsciiTest, WhitespaceIsTheCLocalesSix) {
  for (char c : std::string(" \t\n\v\f\r")) EXPECT_TRUE(IsAsciiWhitespace(c)) << int(c);
  for (char c : std::string("\b\x0e\x1f!a\xA0\x85")) EXPECT_FALSE(IsAsciiWhitespace(c)) << int(c);
  EXPECT_FALSE(IsAsciiWhitespace('\0'));
}

TEST(AsciiTest, DigitsAndAlnumAreTheCLocales) {
  for (char c : std::string("0123456789")) EXPECT_TRUE(IsAsciiDigit(c)) << c;
  for (char c : std::string("/:a\xD9\xA1")) EXPECT_FALSE(IsAsciiDigit(c)) << int(c);
  for (char c : std::string("09azAZ")) EXPECT_TRUE(IsAsciiAlnum(c)) << c;
  // The neighbours of each range, and bytes a locale might call letters (é in Latin-1, UTF-8).
  for (char c : std::string("/:@[`{_-. \xE9\xC3\xA9")) EXPECT_FALSE(IsAsciiAlnum(c)) << int(c);
}

TEST(AsciiTest, StartsWithIgnoreCase) {
  EXPECT_TRUE(StartsWithIgnoreAsciiCase("DATA:image/png", "data:"));
  EXPECT_TRUE(StartsWithIgnoreAsciiCase("data:", "DATA:"));
  EXPECT_TRUE(StartsWithIgnoreAsciiCase("anything", ""));
  EXPECT_FALSE(StartsWithIgnoreAsciiCase("dat", "data:"));
  EXPECT_FALSE(StartsWithIgnoreAsciiCase(" data:", "data:"));
}

TEST(AsciiTest, TrimWhitespaceRemovesLineEndsToo) {
  EXPECT_EQ(TrimAsciiWhitespace("\r\n\t a b \v\f\n"), "a b");
  EXPECT_EQ(TrimAsciiWhitespace(" \n "), "");
  EXPECT_EQ(TrimAsciiWhitespace(""), "");
  EXPECT_EQ(TrimAsciiWhitespace("\xA0x\xA0"), "\xA0x\xA0");  // not ASCII: kept
}

TEST(AsciiTest, FormEncodeKeepsOnlyUnreservedCharacters) {
  EXPECT_EQ(FormEncode("a b/c=d&e~"), "a%20b%2Fc%3Dd%26e~");
  EXPECT_EQ(FormEncode("x:y+z\xff"), "x%3Ay%2Bz%FF");
}

}  // namespace
}  // namespace imgmcp
