#include "imaging/codec.h"

#include <gtest/gtest.h>

#include <string>

#include "test_images.h"

namespace imgmcp::imaging {
namespace {

using testing::CraftPng;
using testing::Photo;
using testing::PngOf;
using testing::Solid;

TEST(SniffTest, RecognisesMagicBytesOnly) {
  EXPECT_EQ(SniffFormat(std::string("\x89PNG\r\n\x1a\n", 8)), ImageFormat::kPng);
  EXPECT_EQ(SniffFormat("\xFF\xD8\xFF\xE0"), ImageFormat::kJpeg);
  EXPECT_EQ(SniffFormat("GIF89a...."), ImageFormat::kGif);
  EXPECT_EQ(SniffFormat("GIF87a...."), ImageFormat::kGif);
  EXPECT_EQ(SniffFormat("RIFF\x10\0\0\0WEBPVP8 "), ImageFormat::kUnknown);  // NUL cut it short
  EXPECT_EQ(SniffFormat(std::string("RIFF\x10\0\0\0WEBPVP8 ", 16)), ImageFormat::kWebp);
  EXPECT_EQ(SniffFormat("RIFFxxxxWAVE"), ImageFormat::kUnknown);
  EXPECT_EQ(SniffFormat("\x89PNX\r\n\x1a\n"), ImageFormat::kUnknown);
  EXPECT_EQ(SniffFormat(""), ImageFormat::kUnknown);
  EXPECT_EQ(SniffFormat("image/png"), ImageFormat::kUnknown);  // a label is not an image
}

TEST(SniffTest, JpegBytesAreJpegWhateverTheyAreCalled) {
  const std::string jpeg = testing::JpegOf(Solid(8, 8, local::Rgb{1, 2, 3}));
  EXPECT_EQ(SniffFormat(jpeg), ImageFormat::kJpeg);
  EXPECT_STREQ(MimeTypeOf(SniffFormat(jpeg)), "image/jpeg");
  EXPECT_STREQ(FileExtensionOf(ImageFormat::kJpeg), ".jpg");
  EXPECT_STREQ(FileExtensionOf(ImageFormat::kUnknown), ".bin");
  EXPECT_STREQ(MimeTypeOf(ImageFormat::kUnknown), "");
}

TEST(ImageInfoTest, ReadsPngJpegGifWebpHeaders) {
  Result<ImageInfo> png = ReadImageInfo(PngOf(Solid(37, 21, local::Rgb{})));
  ASSERT_TRUE(png.ok()) << png.error().message;
  EXPECT_EQ(png->format, ImageFormat::kPng);
  EXPECT_EQ(png->width, 37);
  EXPECT_EQ(png->height, 21);

  Result<ImageInfo> jpeg = ReadImageInfo(testing::JpegOf(Solid(40, 30, local::Rgb{})));
  ASSERT_TRUE(jpeg.ok()) << jpeg.error().message;
  EXPECT_EQ(jpeg->width, 40);
  EXPECT_EQ(jpeg->height, 30);

  const std::string gif = std::string("GIF89a") + "\x2c\x01\xc8\x00" + std::string(10, '\0');
  Result<ImageInfo> g = ReadImageInfo(gif);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->width, 300);
  EXPECT_EQ(g->height, 200);

  // VP8X: canvas width-1 and height-1 as 24-bit little endian at offsets 24 and 27.
  std::string webp = std::string("RIFF\x20\0\0\0WEBPVP8X", 16) + std::string(8, '\0');
  webp += std::string("\x1f\x03\x00\xdf\x01\x00", 6);  // 800 x 480
  webp += std::string(8, '\0');
  Result<ImageInfo> w = ReadImageInfo(webp);
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->format, ImageFormat::kWebp);
  EXPECT_EQ(w->width, 800);
  EXPECT_EQ(w->height, 480);
  // A header without image data: sniffed and measured, but not decodable.
  Result<Image> decoded = Decode(webp);
  ASSERT_FALSE(decoded.ok());
#ifdef IMGMCP_TEST_HAVE_WEBP
  EXPECT_EQ(decoded.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(decoded.error().message.find("image/webp"), std::string::npos);
#else
  EXPECT_EQ(decoded.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(decoded.error().message.find("WebP"), std::string::npos);
#endif
}

TEST(DecodeTest, RefusesNonImageBytes) {
  for (const std::string& bad : {std::string("hello world, not an image at all"),
                                 std::string("\x89PNX\r\n\x1a\n0000000000000000", 24),
                                 std::string("\x13\x37\xca\xfe\x00\x01\x02\x03\xff\xfe", 10)}) {
    Result<Image> r = Decode(bad);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message.find("not an image"), std::string::npos) << r.error().message;
  }
  Result<Image> empty = Decode("");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code, ErrorCode::kInvalidArgument);
}

TEST(DecodeTest, RandomBytesNeverCrash) {
  uint32_t state = 7;
  for (int round = 0; round < 200; ++round) {
    std::string bytes(64 + round, '\0');
    for (char& c : bytes) {
      state = state * 1664525u + 1013904223u;
      c = static_cast<char>(state >> 24);
    }
    if (round % 3 == 0) bytes.replace(0, 8, std::string("\x89PNG\r\n\x1a\n", 8));
    if (round % 3 == 1) bytes.replace(0, 3, "\xFF\xD8\xFF");
    Result<Image> r = Decode(bytes);
    EXPECT_FALSE(r.ok());
  }
}

TEST(DecodeTest, TruncatedPngIsAnError) {
  const std::string png = PngOf(Photo(64, 64));
  Result<Image> header_only = Decode(png.substr(0, 20));
  ASSERT_FALSE(header_only.ok());
  EXPECT_EQ(header_only.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(header_only.error().message.find("truncated"), std::string::npos)
      << header_only.error().message;

  Result<Image> cut = Decode(png.substr(0, png.size() / 2));
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(cut.error().message.find("could not decode image/png"), std::string::npos)
      << cut.error().message;
}

TEST(DecodeTest, TruncatedJpegIsAnError) {
  const std::string jpeg = testing::JpegOf(Photo(64, 64));
  Result<Image> cut = Decode(jpeg.substr(0, jpeg.size() / 2));
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().code, ErrorCode::kInvalidArgument);
  Result<Image> header = Decode(jpeg.substr(0, 10));
  ASSERT_FALSE(header.ok());
  EXPECT_EQ(header.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(header.error().message.find("truncated"), std::string::npos) << header.error().message;
}

TEST(DecodeTest, HugeDimensionsAreRefusedBeforeDecoding) {
  const std::string png = CraftPng(60000, 60000, 1000);
  Result<ImageInfo> info = ReadImageInfo(png);
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().code, ErrorCode::kTooLarge);
  EXPECT_EQ(info.error().message,
            "image is 60000x60000 = 3600000000 pixels; the limit is 50000000");
  Result<Image> r = Decode(png);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kTooLarge);
}

TEST(DecodeTest, DecompressionBombIsRefused) {
  // 4 MB of zeros deflate to ~4 KB; the header declares 2000x2000 RGBA (16 MB decoded). Under a
  // 1-megapixel limit the tiny file must be refused without inflating anything.
  const std::string bomb = CraftPng(2000, 2000, 2000ull * (2000 * 4 + 1));
  ASSERT_LT(bomb.size(), 40'000u);
  DecodeLimits limits;
  limits.max_pixels = 1'000'000;
  Result<Image> r = Decode(bomb, limits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kTooLarge);
  EXPECT_NE(r.error().message.find("2000x2000 = 4000000 pixels"), std::string::npos);
  // The same file within limits is a valid black, transparent image.
  Result<Image> ok = Decode(bomb);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->width, 2000);
  EXPECT_EQ(ok->rgba[0], 0);
}

TEST(DecodeTest, ZeroSizeIsInvalid) {
  Result<Image> r = Decode(CraftPng(0, 10, 10));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("zero size"), std::string::npos) << r.error().message;
}

TEST(DecodeTest, ByteLimit) {
  const std::string png = PngOf(Photo(32, 32));
  DecodeLimits limits;
  limits.max_bytes = 100;
  Result<Image> r = Decode(png, limits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kTooLarge);
  EXPECT_EQ(r.error().message,
            "image is " + std::to_string(png.size()) + " bytes; the limit is 100");
}

TEST(CodecTest, PngRoundTripIsLossless) {
  Image img = Photo(67, 45);
  img.Pixel(3, 4)[3] = 17;  // one translucent pixel forces RGBA output
  Result<Image> back = Decode(PngOf(img));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->width, 67);
  EXPECT_EQ(back->height, 45);
  EXPECT_EQ(back->rgba, img.rgba);

  const Image opaque = Photo(31, 19, 3);  // opaque: written as RGB, decoded back to RGBA
  Result<Image> back2 = Decode(PngOf(opaque));
  ASSERT_TRUE(back2.ok());
  EXPECT_EQ(back2->rgba, opaque.rgba);
  for (int level : {0, 1, 9}) {
    Result<std::string> png = EncodePng(opaque, PngOptions{level});
    ASSERT_TRUE(png.ok());
    EXPECT_EQ(Decode(*png)->rgba, opaque.rgba) << "level " << level;
  }
}

TEST(CodecTest, PngEncodingIsDeterministic) {
  const Image img = Photo(100, 80, 9);
  EXPECT_EQ(PngOf(img), PngOf(img));
}

TEST(CodecTest, JpegRoundTripIsClose) {
  const Image img = Solid(64, 48, local::Rgb{200, 100, 50});
  Result<std::string> jpeg = EncodeJpeg(img, 95);
  ASSERT_TRUE(jpeg.ok());
  EXPECT_EQ(SniffFormat(*jpeg), ImageFormat::kJpeg);
  Result<Image> back = Decode(*jpeg);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->width, 64);
  ASSERT_EQ(back->height, 48);
  const uint8_t* p = back->Pixel(10, 10);
  EXPECT_NEAR(p[0], 200, 3);
  EXPECT_NEAR(p[1], 100, 3);
  EXPECT_NEAR(p[2], 50, 3);
  EXPECT_EQ(p[3], 255);
  EXPECT_FALSE(EncodeJpeg(img, 0).ok());
  EXPECT_FALSE(EncodeJpeg(img, 101).ok());
}

TEST(CodecTest, EncodeRejectsInconsistentImage) {
  Image bad;
  bad.width = 10;
  bad.height = 10;
  bad.rgba.resize(10);
  EXPECT_EQ(EncodePng(bad).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(EncodeJpeg(bad).error().code, ErrorCode::kInvalidArgument);
}

TEST(ResizeTest, FlatStaysExactAndSizesMatch) {
  const Image img = Solid(300, 200, local::Rgb{10, 200, 30});
  for (auto [w, h] : {std::pair{100, 50}, std::pair{299, 1}, std::pair{600, 400}}) {
    Result<Image> r = Resize(img, w, h);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->width, w);
    EXPECT_EQ(r->height, h);
    EXPECT_EQ(testing::At(*r, w / 2, h / 2), (local::Rgb{10, 200, 30}));
  }
  EXPECT_EQ(Resize(img, 0, 5).error().code, ErrorCode::kInvalidArgument);
}

TEST(ResizeTest, DownscaleAveragesAreas) {
  // 4x1 -> 2x1: each output pixel is the mean of two inputs.
  Image img = Solid(4, 1, local::Rgb{});
  const uint8_t values[4] = {0, 100, 200, 255};
  for (int x = 0; x < 4; ++x) img.Pixel(x, 0)[0] = values[x];
  Result<Image> r = Resize(img, 2, 1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->Pixel(0, 0)[0], 50);
  EXPECT_EQ(r->Pixel(1, 0)[0], 228);  // (200 + 255) / 2 = 227.5, rounded
}

}  // namespace
}  // namespace imgmcp::imaging
