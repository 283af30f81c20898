#include "local_backend/colors.h"

#include <gtest/gtest.h>

#include "tests/unit/imaging/test_images.h"

namespace imgmcp::local {
namespace {

TEST(ColorsTest, ParsesCssNamesAndHex) {
  EXPECT_EQ(local::ParseColor("red"), (local::Rgb{255, 0, 0}));
  EXPECT_EQ(local::ParseColor("CornflowerBlue"), (local::Rgb{0x64, 0x95, 0xed}));
  EXPECT_EQ(local::ParseColor("rebeccapurple"), (local::Rgb{0x66, 0x33, 0x99}));
  EXPECT_EQ(local::ParseColor("aliceblue"), (local::Rgb{0xf0, 0xf8, 0xff}));
  EXPECT_EQ(local::ParseColor("yellowgreen"), (local::Rgb{0x9a, 0xcd, 0x32}));
  EXPECT_EQ(local::ParseColor("grey"), local::ParseColor("gray"));
  EXPECT_EQ(local::ParseColor("#FF8000"), (local::Rgb{255, 128, 0}));
  EXPECT_EQ(local::ParseColor("#f80"), (local::Rgb{255, 136, 0}));
  EXPECT_FALSE(local::ParseColor("blurple"));
  EXPECT_FALSE(local::ParseColor("#12345"));
  EXPECT_FALSE(local::ParseColor("#gg0000"));
  EXPECT_FALSE(local::ParseColor(""));
}

TEST(ColorsTest, FindsColoursInOrderWithoutDuplicates) {
  const std::vector<local::Rgb> found =
      local::FindColors("A Red fox under a #00ff00 sky, light blue water and more red.");
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0], (local::Rgb{255, 0, 0}));
  EXPECT_EQ(found[1], (local::Rgb{0, 255, 0}));
  EXPECT_EQ(found[2], *local::ParseColor("lightblue"));
  EXPECT_TRUE(local::FindColors("a quiet landscape").empty());
}

TEST(ColorsTest, ToHex) { EXPECT_EQ(ToHex(Rgb{1, 171, 255}), "#01abff"); }

}  // namespace
}  // namespace imgmcp::local
