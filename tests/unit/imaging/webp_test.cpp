// WebP decoding (libwebp): inputs are made with libwebp's own encoder, lossless where pixels are
// compared exactly.
#include <gtest/gtest.h>
#include <webp/encode.h>
#include <webp/types.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "imaging/codec.h"
#include "imaging/image_backend.h"

namespace imgmcp::imaging {
namespace {

// A w x h RGBA gradient with a half-transparent right half.
std::vector<uint8_t> Gradient(int w, int h) {
  std::vector<uint8_t> rgba(static_cast<size_t>(w) * h * 4);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &rgba[(static_cast<size_t>(y) * w + x) * 4];
      p[0] = static_cast<uint8_t>(x * 255 / (w - 1));
      p[1] = static_cast<uint8_t>(y * 255 / (h - 1));
      p[2] = 90;
      p[3] = x < w / 2 ? 255 : 128;
    }
  }
  return rgba;
}

std::string Lossless(const std::vector<uint8_t>& rgba, int w, int h) {
  uint8_t* out = nullptr;
  const size_t size = WebPEncodeLosslessRGBA(rgba.data(), w, h, w * 4, &out);
  std::string bytes(reinterpret_cast<const char*>(out), size);
  WebPFree(out);
  return bytes;
}

std::string Lossy(const std::vector<uint8_t>& rgba, int w, int h) {
  uint8_t* out = nullptr;
  const size_t size = WebPEncodeRGBA(rgba.data(), w, h, w * 4, 90.0f, &out);
  std::string bytes(reinterpret_cast<const char*>(out), size);
  WebPFree(out);
  return bytes;
}

TEST(WebpDecodeTest, LosslessDecodesToTheExactPixelsWithAlpha) {
  const std::vector<uint8_t> pixels = Gradient(64, 32);
  const std::string webp = Lossless(pixels, 64, 32);
  ASSERT_FALSE(webp.empty());
  Result<ImageInfo> info = ReadImageInfo(webp);
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ((info->format), ImageFormat::kWebp);
  Result<Image> image = Decode(webp);
  ASSERT_TRUE(image.ok()) << image.error().message;
  EXPECT_EQ(image->width, 64);
  EXPECT_EQ(image->height, 32);
  EXPECT_EQ(image->rgba, pixels);
}

TEST(WebpDecodeTest, LossyDecodesCloseToTheSource) {
  const std::vector<uint8_t> pixels = Gradient(96, 48);
  Result<Image> image = Decode(Lossy(pixels, 96, 48));
  ASSERT_TRUE(image.ok()) << image.error().message;
  ASSERT_EQ(image->rgba.size(), pixels.size());
  int worst = 0;
  for (size_t i = 0; i < pixels.size(); ++i) {
    worst = std::max(worst, std::abs(int{image->rgba[i]} - int{pixels[i]}));
  }
  EXPECT_LT(worst, 48);  // lossy, but the same picture
}

TEST(WebpDecodeTest, PreviewOfAWebpIsAnEncodedImage) {
  const std::string webp = Lossless(Gradient(300, 200), 300, 200);
  PreviewOptions options;
  options.max_edge = 150;
  Result<EncodedImage> preview = MakePreview(webp, options);
  ASSERT_TRUE(preview.ok()) << preview.error().message;
  Result<Image> decoded = Decode(preview->bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->width, 150);
  EXPECT_EQ(decoded->height, 100);
}

TEST(WebpDecodeTest, TruncatedAndCorruptDataAreClearErrors) {
  const std::string webp = Lossless(Gradient(64, 32), 64, 32);
  for (size_t keep : {webp.size() / 2, webp.size() - 1}) {
    SCOPED_TRACE(keep);
    Result<Image> image = Decode(webp.substr(0, keep));
    ASSERT_FALSE(image.ok());
    EXPECT_EQ(image.error().code, ErrorCode::kInvalidArgument);
  }
  std::string flipped = webp;
  for (size_t i = 40; i < flipped.size(); i += 7) flipped[i] = static_cast<char>(~flipped[i]);
  Result<Image> corrupt = Decode(flipped);
  ASSERT_FALSE(corrupt.ok());
  EXPECT_EQ(corrupt.error().code, ErrorCode::kInvalidArgument);
}

TEST(WebpDecodeTest, PixelLimitIsCheckedBeforeDecoding) {
  const std::string webp = Lossless(Gradient(64, 32), 64, 32);
  DecodeLimits limits;
  limits.max_pixels = 64 * 32 - 1;
  Result<Image> image = Decode(webp, limits);
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error().code, ErrorCode::kTooLarge);
}

}  // namespace
}  // namespace imgmcp::imaging
