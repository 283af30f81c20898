#include "imaging/colors.h"

#include <gtest/gtest.h>

#include "test_images.h"

namespace imgmcp::imaging {
namespace {

TEST(ColorsTest, ParsesCssNamesAndHex) {
  EXPECT_EQ(ParseColor("red"), (Rgb{255, 0, 0}));
  EXPECT_EQ(ParseColor("CornflowerBlue"), (Rgb{0x64, 0x95, 0xed}));
  EXPECT_EQ(ParseColor("rebeccapurple"), (Rgb{0x66, 0x33, 0x99}));
  EXPECT_EQ(ParseColor("aliceblue"), (Rgb{0xf0, 0xf8, 0xff}));
  EXPECT_EQ(ParseColor("yellowgreen"), (Rgb{0x9a, 0xcd, 0x32}));
  EXPECT_EQ(ParseColor("grey"), ParseColor("gray"));
  EXPECT_EQ(ParseColor("#FF8000"), (Rgb{255, 128, 0}));
  EXPECT_EQ(ParseColor("#f80"), (Rgb{255, 136, 0}));
  EXPECT_FALSE(ParseColor("blurple"));
  EXPECT_FALSE(ParseColor("#12345"));
  EXPECT_FALSE(ParseColor("#gg0000"));
  EXPECT_FALSE(ParseColor(""));
}

TEST(ColorsTest, FindsColoursInOrderWithoutDuplicates) {
  const std::vector<Rgb> found =
      FindColors("A Red fox under a #00ff00 sky, light blue water and more red.");
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0], (Rgb{255, 0, 0}));
  EXPECT_EQ(found[1], (Rgb{0, 255, 0}));
  EXPECT_EQ(found[2], *ParseColor("lightblue"));
  EXPECT_TRUE(FindColors("a quiet landscape").empty());
}

TEST(ColorsTest, ToHex) { EXPECT_EQ(ToHex(Rgb{1, 171, 255}), "#01abff"); }

}  // namespace
}  // namespace imgmcp::imaging
