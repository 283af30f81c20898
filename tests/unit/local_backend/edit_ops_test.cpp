#include "local_backend/edit_ops.h"

#include <gtest/gtest.h>

#include "local_backend/edit_parser.h"
#include "tests/unit/imaging/test_images.h"

namespace imgmcp::local {
namespace {

using imaging::testing::At;
using imaging::testing::Solid;

// Parses `instruction` and applies every clause, failing the test on any error.
imaging::Image Apply(imaging::Image img, const std::string& instruction) {
  Result<std::vector<EditClause>> clauses = local::ParseEditInstructions(instruction);
  EXPECT_TRUE(clauses.ok()) << clauses.error().message;
  if (!clauses.ok()) return img;
  for (const local::EditClause& c : *clauses) {
    Status s = ApplyEdit(img, c.op, imaging::DecodeLimits{});
    EXPECT_TRUE(s.ok()) << c.source << ": " << s.error().message;
  }
  return img;
}

// Every pixel (all of them; test images are small) has colour `c`.
void ExpectAll(const imaging::Image& img, local::Rgb c) {
  for (int y = 0; y < img.height; ++y) {
    for (int x = 0; x < img.width; ++x) ASSERT_EQ(At(img, x, y), c) << x << "," << y;
  }
}

// An image whose every pixel encodes its own coordinates: (x, y, 7).
imaging::Image Coordinates(int w, int h) {
  imaging::Image img = Solid(w, h, Rgb{});
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      img.Pixel(x, y)[0] = static_cast<uint8_t>(x);
      img.Pixel(x, y)[1] = static_cast<uint8_t>(y);
      img.Pixel(x, y)[2] = 7;
    }
  }
  return img;
}

TEST(EditOpsTest, InvertRedIsCyanEverywhere) {
  ExpectAll(Apply(Solid(16, 9, Rgb{255, 0, 0}), "invert"), Rgb{0, 255, 255});
}

TEST(EditOpsTest, GrayscaleUsesRec601Luma) {
  // (77*255 + 128) >> 8 = 77; (77*10 + 150*20 + 29*30 + 128) >> 8 = 18
  ExpectAll(Apply(Solid(4, 4, Rgb{255, 0, 0}), "grayscale"), Rgb{77, 77, 77});
  ExpectAll(Apply(Solid(4, 4, Rgb{10, 20, 30}), "greyscale"), Rgb{18, 18, 18});
  ExpectAll(Apply(Solid(4, 4, Rgb{255, 255, 255}), "grayscale"), Rgb{255, 255, 255});
}

TEST(EditOpsTest, RotateMovesPixelsClockwise) {
  const imaging::Image src = Coordinates(5, 3);  // 5 wide, 3 tall
  const imaging::Image r90 = Apply(src, "rotate 90");
  ASSERT_EQ(r90.width, 3);
  ASSERT_EQ(r90.height, 5);
  EXPECT_EQ(At(r90, 2, 0), (Rgb{0, 0, 7}));  // old top-left -> new top-right
  EXPECT_EQ(At(r90, 0, 0), (Rgb{0, 2, 7}));  // old bottom-left -> new top-left
  EXPECT_EQ(At(r90, 0, 4), (Rgb{4, 2, 7}));  // old bottom-right -> new bottom-left
  const imaging::Image r270 = Apply(src, "rotate 270");
  EXPECT_EQ(At(r270, 0, 4), (Rgb{0, 0, 7}));  // old top-left -> new bottom-left
  const imaging::Image r180 = Apply(src, "rotate 180");
  ASSERT_EQ(r180.width, 5);
  EXPECT_EQ(At(r180, 4, 2), (Rgb{0, 0, 7}));
  EXPECT_EQ(At(r180, 0, 0), (Rgb{4, 2, 7}));
  EXPECT_EQ(Apply(r90, "rotate 270").rgba, src.rgba);
}

TEST(EditOpsTest, Flip) {
  const imaging::Image src = Coordinates(5, 3);
  const imaging::Image h = Apply(src, "flip horizontal");
  EXPECT_EQ(At(h, 0, 1), (Rgb{4, 1, 7}));
  EXPECT_EQ(At(h, 2, 1), (Rgb{2, 1, 7}));
  const imaging::Image v = Apply(src, "flip vertical");
  EXPECT_EQ(At(v, 3, 0), (Rgb{3, 2, 7}));
  EXPECT_EQ(At(v, 3, 1), (Rgb{3, 1, 7}));
}

TEST(EditOpsTest, DrawSquareSetsExactlyItsBox) {
  const imaging::Image img = Apply(Solid(32, 32, Rgb{0, 0, 0}), "draw square red at 10,10 size 4");
  int red = 0;
  for (int y = 0; y < 32; ++y) {
    for (int x = 0; x < 32; ++x) {
      const bool inside = x >= 10 && x <= 13 && y >= 10 && y <= 13;
      EXPECT_EQ(At(img, x, y), (inside ? Rgb{255, 0, 0} : Rgb{0, 0, 0})) << x << "," << y;
      red += inside;
    }
  }
  EXPECT_EQ(red, 16);
}

TEST(EditOpsTest, DrawIsClippedAtEdges) {
  const imaging::Image img = Apply(Solid(8, 8, Rgb{0, 0, 0}), "draw square white at 6,-2 size 5");
  EXPECT_EQ(At(img, 7, 0), (Rgb{255, 255, 255}));
  EXPECT_EQ(At(img, 6, 2), (Rgb{255, 255, 255}));
  EXPECT_EQ(At(img, 6, 3), (Rgb{0, 0, 0}));
  EXPECT_EQ(At(img, 5, 0), (Rgb{0, 0, 0}));
}

TEST(EditOpsTest, DrawCircleIsInscribedInItsBox) {
  const imaging::Image img = Apply(Solid(20, 20, Rgb{0, 0, 0}), "draw circle blue at 2,3 size 10");
  const Rgb blue{0, 0, 255}, black{0, 0, 0};
  EXPECT_EQ(At(img, 7, 8), blue);   // centre
  EXPECT_EQ(At(img, 2, 8), blue);   // left edge midpoint
  EXPECT_EQ(At(img, 11, 8), blue);  // right edge midpoint
  EXPECT_EQ(At(img, 2, 3), black);  // box corners are outside the disc
  EXPECT_EQ(At(img, 11, 12), black);
  EXPECT_EQ(At(img, 1, 8), black);  // outside the box
  EXPECT_EQ(At(img, 12, 8), black);
  const imaging::Image dot = Apply(Solid(20, 20, Rgb{0, 0, 0}), "draw dot white at 0,0");
  EXPECT_EQ(At(dot, 4, 4), (Rgb{255, 255, 255}));
  EXPECT_EQ(At(dot, 8, 4), black);  // default dot size 8 covers x 0..7
}

TEST(EditOpsTest, CropDimensionsAndContent) {
  const imaging::Image img = Apply(Coordinates(20, 10), "crop 3,4,5,6");
  ASSERT_EQ(img.width, 5);
  ASSERT_EQ(img.height, 6);
  EXPECT_EQ(At(img, 0, 0), (Rgb{3, 4, 7}));
  EXPECT_EQ(At(img, 4, 5), (Rgb{7, 9, 7}));
}

TEST(EditOpsTest, CropOutsideIsAClearError) {
  imaging::Image img = Solid(20, 10, Rgb{});
  Status s = ApplyEdit(img, CropOp{15, 0, 10, 5}, imaging::DecodeLimits{});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(s.error().message.find("crop 15,0,10,5 is outside the 20x10 image"), std::string::npos)
      << s.error().message;
  EXPECT_FALSE(ApplyEdit(img, CropOp{-1, 0, 5, 5}, imaging::DecodeLimits{}).ok());
  EXPECT_EQ(img.width, 20);  // unchanged on error
}

TEST(EditOpsTest, BorderPaintsInsideAndKeepsSize) {
  const imaging::Image img = Apply(Solid(20, 10, Rgb{0, 0, 0}), "border white 2");
  ASSERT_EQ(img.width, 20);
  ASSERT_EQ(img.height, 10);
  for (int y = 0; y < 10; ++y) {
    for (int x = 0; x < 20; ++x) {
      const bool edge = x < 2 || x >= 18 || y < 2 || y >= 8;
      ASSERT_EQ(At(img, x, y), (edge ? Rgb{255, 255, 255} : Rgb{0, 0, 0})) << x << "," << y;
    }
  }
}

TEST(EditOpsTest, BrightnessContrastTintArithmetic) {
  // brightness: v * (100 + N) / 100, rounded, clamped.
  ExpectAll(Apply(Solid(3, 3, Rgb{100, 200, 0}), "brightness +20%"), Rgb{120, 240, 0});
  ExpectAll(Apply(Solid(3, 3, Rgb{100, 250, 1}), "brightness -50%"), Rgb{50, 125, 1});
  ExpectAll(Apply(Solid(3, 3, Rgb{100, 250, 1}), "brightness 50%"), Rgb{150, 255, 2});
  // contrast: (v - 128) * (100 + N) / 100 + 128.
  ExpectAll(Apply(Solid(3, 3, Rgb{28, 228, 128}), "contrast +50%"), Rgb{0, 255, 128});
  ExpectAll(Apply(Solid(3, 3, Rgb{28, 228, 128}), "contrast -50%"), Rgb{78, 178, 128});
  // tint: v * (100 - s) / 100 + c * s / 100.
  ExpectAll(Apply(Solid(3, 3, Rgb{0, 100, 200}), "tint white 50%"), Rgb{128, 178, 228});
  ExpectAll(Apply(Solid(3, 3, Rgb{0, 100, 200}), "tint red"), Rgb{77, 70, 140});
}

TEST(EditOpsTest, BlurKeepsFlatAndSmoothsEdges) {
  ExpectAll(Apply(Solid(9, 9, Rgb{40, 50, 60}), "blur 3"), Rgb{40, 50, 60});
  // Left half black, right half white: a radius-1 box (3 wide) gives 0, 85, 170, 255 across.
  imaging::Image img = Solid(8, 3, Rgb{0, 0, 0});
  for (int y = 0; y < 3; ++y) {
    for (int x = 4; x < 8; ++x) std::fill(img.Pixel(x, y), img.Pixel(x, y) + 3, 255);
  }
  const imaging::Image b = Apply(img, "blur 1");
  EXPECT_EQ(At(b, 2, 1).r, 0);
  EXPECT_EQ(At(b, 3, 1).r, 85);
  EXPECT_EQ(At(b, 4, 1).r, 170);
  EXPECT_EQ(At(b, 5, 1).r, 255);
}

TEST(EditOpsTest, SharpenAccentuatesASpot) {
  imaging::Image img = Solid(5, 5, Rgb{100, 100, 100});
  img.Pixel(2, 2)[0] = 120;
  const imaging::Image s = Apply(img, "sharpen");
  EXPECT_EQ(At(s, 2, 2).r, 200);  // 5*120 - 4*100
  EXPECT_EQ(At(s, 1, 2).r, 80);   // 5*100 - 3*100 - 120
  EXPECT_EQ(At(s, 0, 0).r, 100);
}

TEST(EditOpsTest, ResizeAndLimits) {
  const imaging::Image r = Apply(Solid(40, 20, Rgb{9, 9, 9}), "resize 10x5");
  EXPECT_EQ(r.width, 10);
  EXPECT_EQ(r.height, 5);
  const imaging::Image p = Apply(Solid(40, 20, Rgb{9, 9, 9}), "resize 50%");
  EXPECT_EQ(p.width, 20);
  EXPECT_EQ(p.height, 10);
  imaging::Image img = Solid(4, 4, Rgb{});
  imaging::DecodeLimits small;
  small.max_pixels = 100;
  Status s = ApplyEdit(img, ResizeOp{20, 20, 0}, small);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kTooLarge);
}

TEST(EditOpsTest, TextDrawsGlyphPixels) {
  const imaging::Image img = Apply(Solid(40, 20, Rgb{255, 255, 255}), "text \"I\" at 0,0 size 1");
  // 'I' row 0 is ".###.": pixels 1..3 inked, 0 and 4 not.
  EXPECT_EQ(At(img, 0, 0), (Rgb{255, 255, 255}));
  EXPECT_EQ(At(img, 1, 0), (Rgb{0, 0, 0}));
  EXPECT_EQ(At(img, 3, 0), (Rgb{0, 0, 0}));
  EXPECT_EQ(At(img, 4, 0), (Rgb{255, 255, 255}));
  EXPECT_EQ(At(img, 2, 3), (Rgb{0, 0, 0}));  // the stem
  EXPECT_EQ(At(img, 1, 3), (Rgb{255, 255, 255}));
  const imaging::Image big =
      Apply(Solid(40, 20, Rgb{255, 255, 255}), "text \"I\" at 0,0 red size 2");
  EXPECT_EQ(At(big, 2, 0), (Rgb{255, 0, 0}));
  EXPECT_EQ(At(big, 5, 1), (Rgb{255, 0, 0}));
  EXPECT_EQ(At(big, 1, 0), (Rgb{255, 255, 255}));
}

TEST(EditOpsTest, ClauseOrderMatters) {
  // Draw then rotate: the square moves with the image. Rotate then draw: it stays at 0,0.
  const imaging::Image a =
      Apply(Solid(10, 6, Rgb{0, 0, 0}), "draw square red at 0,0 size 2, rotate 90");
  const imaging::Image b =
      Apply(Solid(10, 6, Rgb{0, 0, 0}), "rotate 90, draw square red at 0,0 size 2");
  EXPECT_EQ(At(a, 5, 0), (Rgb{255, 0, 0}));  // old (0,0) -> new (h-1, 0)
  EXPECT_EQ(At(a, 0, 0), (Rgb{0, 0, 0}));
  EXPECT_EQ(At(b, 0, 0), (Rgb{255, 0, 0}));
  EXPECT_EQ(At(b, 5, 0), (Rgb{0, 0, 0}));
  // Tint then invert differs from invert then tint.
  EXPECT_EQ(At(Apply(Solid(2, 2, Rgb{0, 0, 0}), "tint white 50%, invert"), 0, 0),
            (Rgb{127, 127, 127}));
  EXPECT_EQ(At(Apply(Solid(2, 2, Rgb{0, 0, 0}), "invert, tint black 50%"), 0, 0),
            (Rgb{128, 128, 128}));
}

}  // namespace
}  // namespace imgmcp::local
