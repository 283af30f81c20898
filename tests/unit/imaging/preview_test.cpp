#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "imaging/codec.h"
#include "test_images.h"

namespace imgmcp::imaging {
namespace {

TEST(PreviewTest, SmallPngOrJpegIsReturnedUnchanged) {
  const std::string png = testing::PngOf(testing::Photo(100, 50));
  Result<EncodedImage> p = MakePreview(png);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->bytes, png);
  EXPECT_EQ(p->mime_type, "image/png");
  const std::string jpeg = testing::JpegOf(testing::Photo(300, 200));
  Result<EncodedImage> j = MakePreview(jpeg);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->bytes, jpeg);
  EXPECT_EQ(j->mime_type, "image/jpeg");
}

TEST(PreviewTest, NeverUpscales) {
  const std::string png = testing::PngOf(testing::Photo(60, 40));
  Result<EncodedImage> p = MakePreview(png, PreviewOptions{2000, 1 << 20});
  ASSERT_TRUE(p.ok());
  Result<ImageInfo> info = ReadImageInfo(p->bytes);
  EXPECT_EQ(info->width, 60);
  EXPECT_EQ(info->height, 40);
}

TEST(PreviewTest, RespectsMaxEdgeAndKeepsAspect) {
  for (const std::string& src :
       {testing::PngOf(testing::Photo(1600, 900)), testing::JpegOf(testing::Photo(900, 1600))}) {
    Result<EncodedImage> p = MakePreview(src, PreviewOptions{400, 600 * 1024});
    ASSERT_TRUE(p.ok()) << p.error().message;
    Result<ImageInfo> info = ReadImageInfo(p->bytes);
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(std::max(info->width, info->height), 400);
    EXPECT_EQ(std::min(info->width, info->height), 225);
    EXPECT_EQ(p->mime_type, MimeTypeOf(info->format));
  }
}

TEST(PreviewTest, RespectsByteBudget) {
  const std::string src = testing::PngOf(testing::Photo(1024, 1024));
  for (size_t budget : {size_t{200'000}, size_t{30'000}, size_t{4'000}}) {
    Result<EncodedImage> p = MakePreview(src, PreviewOptions{768, budget});
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_LE(p->bytes.size(), budget);
    EXPECT_EQ(p->mime_type, "image/jpeg");
    EXPECT_TRUE(Decode(p->bytes).ok());
  }
  // A source within the edge limit but over the budget is re-encoded, not returned as is.
  Result<EncodedImage> p = MakePreview(src, PreviewOptions{1024, 50'000});
  ASSERT_TRUE(p.ok());
  EXPECT_LE(p->bytes.size(), 50'000u);
}

TEST(PreviewTest, FlatImagesStayPng) {
  const std::string src = testing::PngOf(testing::Solid(2000, 1000, local::Rgb{1, 2, 3}));
  Result<EncodedImage> p = MakePreview(src);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->mime_type, "image/png");
  Result<Image> img = Decode(p->bytes);
  ASSERT_TRUE(img.ok());
  EXPECT_EQ(img->width, 768);
  EXPECT_EQ(img->height, 384);
  EXPECT_EQ(testing::At(*img, 100, 100), (local::Rgb{1, 2, 3}));
}

TEST(PreviewTest, GifIsConverted) {
  // Hand-made 1x1 GIF (red pixel): not returned as GIF even though it is small.
  const std::string gif(
      "GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\x00\x00\x00\x00\x00"
      "\x2c\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x44\x01\x00\x3b",
      35);
  Result<EncodedImage> p = MakePreview(gif);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->mime_type, "image/png");
  Result<Image> img = Decode(p->bytes);
  ASSERT_TRUE(img.ok());
  EXPECT_EQ(testing::At(*img, 0, 0), (local::Rgb{255, 0, 0}));
}

TEST(PreviewTest, BadInputsAreErrors) {
  EXPECT_EQ(MakePreview("garbage").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(MakePreview(testing::CraftPng(60000, 60000, 10)).error().code, ErrorCode::kTooLarge);
  EXPECT_EQ(MakePreview(testing::PngOf(testing::Photo(8, 8)), PreviewOptions{0, 100}).error().code,
            ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace imgmcp::imaging
