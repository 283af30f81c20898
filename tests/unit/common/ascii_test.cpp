#include "common/ascii.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace imgmcp
