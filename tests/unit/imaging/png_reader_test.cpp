// The PNG row decoder (internal::DecodePngRows, with libdeflate and with zlib streaming) and the
// streaming area downscaler behind MakePreview: pixels must equal stb's decode and the
// whole-image area downscale exactly.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "imaging/codec.h"
#include "imaging/codec_internal.h"
#include "test_images.h"

namespace imgmcp::imaging {
namespace {

using internal::PixelBuffer;

void PutBe32(std::string& s, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s += static_cast<char>((v >> shift) & 0xff);
}

void PutChunk(std::string& png, const char* type, const std::string& data) {
  PutBe32(png, static_cast<uint32_t>(data.size()));
  const std::string body = std::string(type, 4) + data;
  png += body;
  PutBe32(png, static_cast<uint32_t>(
                   crc32(0, reinterpret_cast<const Bytef*>(body.data()), body.size())));
}

int PaethRef(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

struct PngSpec {
  int width = 0;
  int height = 0;
  int channels = 4;                // 3 (RGB) or 4 (RGBA)
  std::vector<int> filters;        // per row, cycled; values 0-4
  std::vector<std::string> extra;  // raw chunks (with length/type/CRC) inserted before IDAT
  size_t idat_split = 0;           // >0: IDAT chunks of this many bytes
  uint8_t interlace = 0;
  uint8_t depth = 8;
  int color_type = -1;  // -1: from channels
};

PngSpec Spec(int width, int height, int channels, std::vector<int> filters) {
  PngSpec spec;
  spec.width = width;
  spec.height = height;
  spec.channels = channels;
  spec.filters = std::move(filters);
  return spec;
}

// Hand-made encoder, independent of the production writer, so every filter type is exercised.
std::string MakePng(const PngSpec& spec, uint32_t seed = 7) {
  const int n = spec.channels;
  const size_t stride = static_cast<size_t>(spec.width) * n;
  std::vector<uint8_t> prev(stride, 0), cur(stride);
  std::string raw;
  uint32_t state = seed;
  for (int y = 0; y < spec.height; ++y) {
    for (size_t i = 0; i < stride; ++i) {
      state = state * 1664525u + 1013904223u;
      // Mix of smooth and noisy bytes, so Paeth ties and every predictor branch occur.
      cur[i] = static_cast<uint8_t>((i % 7 == 0) ? (state >> 24) : ((i * 3 + y * 5) & 0xff));
    }
    const int f = spec.filters[y % spec.filters.size()];
    raw += static_cast<char>(f);
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= static_cast<size_t>(n) ? cur[i - n] : 0;
      const int b = prev[i];
      const int c = i >= static_cast<size_t>(n) ? prev[i - n] : 0;
      int pred = 0;
      if (f == 1) pred = a;
      if (f == 2) pred = b;
      if (f == 3) pred = (a + b) >> 1;
      if (f == 4) pred = PaethRef(a, b, c);
      raw += static_cast<char>((cur[i] - pred) & 0xff);
    }
    prev = cur;
  }
  uLongf len = compressBound(raw.size());
  std::string z(len, '\0');
  compress2(reinterpret_cast<Bytef*>(z.data()), &len, reinterpret_cast<const Bytef*>(raw.data()),
            raw.size(), 6);
  z.resize(len);

  std::string png("\x89PNG\r\n\x1a\n", 8);
  std::string ihdr;
  PutBe32(ihdr, spec.width);
  PutBe32(ihdr, spec.height);
  ihdr += static_cast<char>(spec.depth);
  ihdr += static_cast<char>(spec.color_type >= 0 ? spec.color_type : (n == 4 ? 6 : 2));
  ihdr += std::string(2, '\0');
  ihdr += static_cast<char>(spec.interlace);
  PutChunk(png, "IHDR", ihdr);
  for (const std::string& c : spec.extra) png += c;
  const size_t piece = spec.idat_split > 0 ? spec.idat_split : z.size();
  for (size_t at = 0; at < z.size(); at += piece) PutChunk(png, "IDAT", z.substr(at, piece));
  PutChunk(png, "IEND", "");
  return png;
}

// Decodes through the row path into one buffer (libdeflate when built with it, or zlib).
Result<std::vector<uint8_t>> DecodeRows(
    const std::string& png, internal::PngInflate inflate = internal::PngInflate::kAuto) {
  Result<ImageInfo> info = ReadImageInfo(png);
  if (!info.ok()) return info.error();
  std::vector<uint8_t> out;
  const size_t row = static_cast<size_t>(info->width) * 4;
  Status s = internal::DecodePngRows(
      png, *info, [&](const uint8_t* rgba) { out.insert(out.end(), rgba, rgba + row); }, inflate);
  if (!s) return s.error();
  return out;
}

std::vector<uint8_t> DecodeStb(const std::string& png) {
  Result<ImageInfo> info = ReadImageInfo(png);
  EXPECT_TRUE(info.ok());
  Result<PixelBuffer> px = internal::DecodeWithStb(png, *info);
  EXPECT_TRUE(px.ok()) << px.error().message;
  if (!px.ok()) return {};
  return std::vector<uint8_t>(px->data(), px->data() + px->size());
}

constexpr internal::PngInflate kBothInflaters[] = {internal::PngInflate::kAuto,
                                                   internal::PngInflate::kZlibStreaming};

void ExpectSameAsStb(const PngSpec& spec) {
  const std::string png = MakePng(spec);
  for (internal::PngInflate inflate : kBothInflaters) {
    Result<std::vector<uint8_t>> rows = DecodeRows(png, inflate);
    ASSERT_TRUE(rows.ok()) << rows.error().message;
    EXPECT_EQ(*rows, DecodeStb(png))
        << spec.width << "x" << spec.height << " ch=" << spec.channels
        << " zlib=" << (inflate == internal::PngInflate::kZlibStreaming);
  }
}

TEST(PngRowDecoderTest, EveryFilterTypeMatchesStb) {
  for (int channels : {3, 4}) {
    for (int filter = 0; filter <= 4; ++filter) {
      SCOPED_TRACE("channels " + std::to_string(channels) + " filter " + std::to_string(filter));
      ExpectSameAsStb(Spec(37, 23, channels, {filter}));
    }
  }
}

TEST(PngRowDecoderTest, MixedFiltersAndOddSizesMatchStb) {
  for (int channels : {3, 4}) {
    for (auto [w, h] : {std::pair{1, 1}, {1, 9}, {9, 1}, {2, 3}, {33, 17}, {101, 7}}) {
      SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
      ExpectSameAsStb(Spec(w, h, channels, {4, 0, 3, 1, 2}));
    }
  }
}

TEST(PngRowDecoderTest, SplitIdatAndAncillaryChunksMatchStb) {
  std::string text;
  PutChunk(text, "tEXt", std::string("Comment\0hello", 13));
  PngSpec spec = Spec(40, 30, 4, {1, 4});
  spec.extra = {text};
  spec.idat_split = 7;
  ExpectSameAsStb(spec);
}

TEST(PngRowDecoderTest, ProductionEncoderOutputMatchesStb) {
  for (const Image& img :
       {testing::Photo(257, 129), testing::Solid(5, 3, local::Rgb{1, 2, 3}, 128)}) {
    const std::string png = testing::PngOf(img);
    Result<std::vector<uint8_t>> rows = DecodeRows(png);
    ASSERT_TRUE(rows.ok()) << rows.error().message;
    EXPECT_EQ(*rows, DecodeStb(png));
    EXPECT_EQ(*rows, img.rgba);
  }
}

TEST(PngRowDecoderTest, OtherLayoutsAreLeftToStbBeforeAnyRow) {
  std::string trns;
  PutChunk(trns, "tRNS", std::string(6, '\0'));
  PngSpec keyed = Spec(8, 8, 3, {0}), interlaced = Spec(8, 8, 4, {0}), deep = Spec(8, 8, 4, {0});
  keyed.extra = {trns};
  interlaced.interlace = 1;
  deep.depth = 16;
  const std::vector<std::string> pngs = {
      MakePng(keyed),
      MakePng(interlaced),
      MakePng(deep),
      testing::CraftPng(8, 8, 8 * 9, 0),  // grayscale
      testing::CraftPng(8, 8, 8 * 9, 3),  // palette
  };
  for (size_t i = 0; i < pngs.size(); ++i) {
    Result<ImageInfo> info = ReadImageInfo(pngs[i]);
    ASSERT_TRUE(info.ok()) << i;
    int rows = 0;
    Status s = internal::DecodePngRows(pngs[i], *info, [&](const uint8_t*) { ++rows; });
    ASSERT_FALSE(s.ok()) << i;
    EXPECT_EQ(s.error().code, ErrorCode::kUnsupported) << i;
    EXPECT_EQ(rows, 0) << i;
  }
}

TEST(PngRowDecoderTest, TruncatedOrCorruptDataIsAClearError) {
  const std::string png = MakePng(Spec(64, 64, 4, {4}));
  std::string flipped = png;
  flipped[png.size() / 2] ^= 0x55;  // inside the IDAT data
  const std::vector<std::string> broken = {png.substr(0, png.size() / 2), png.substr(0, 40),
                                           png.substr(0, png.size() - 12),  // no IEND
                                           flipped};
  for (size_t i = 0; i < broken.size(); ++i) {
    Result<ImageInfo> info = ReadImageInfo(broken[i]);
    ASSERT_TRUE(info.ok()) << i;
    for (internal::PngInflate inflate : kBothInflaters) {
      Status s = internal::DecodePngRows(
          broken[i], *info, [](const uint8_t*) {}, inflate);
      ASSERT_FALSE(s.ok()) << i;
      EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument) << i;
      EXPECT_NE(s.error().message.find("could not decode image/png image (truncated or corrupt)"),
                std::string::npos)
          << s.error().message;
    }
    // The public entry points still fail cleanly (stb has the final word on broken files).
    EXPECT_FALSE(MakePreview(broken[i], PreviewOptions{.max_edge = 16}).ok()) << i;
  }
}

// An 8-bit RGBA PNG whose IHDR says width x height and whose one IDAT holds `filtered` (filter
// byte + row, per row) as given: for data that disagrees with its own header.
std::string RgbaPngOfFilteredData(uint32_t width, uint32_t height, const std::string& filtered) {
  uLongf len = compressBound(filtered.size());
  std::string z(len, '\0');
  compress2(reinterpret_cast<Bytef*>(z.data()), &len,
            reinterpret_cast<const Bytef*>(filtered.data()), filtered.size(), 6);
  z.resize(len);
  std::string png("\x89PNG\r\n\x1a\n", 8), ihdr;
  PutBe32(ihdr, width);
  PutBe32(ihdr, height);
  ihdr += std::string("\x08\x06\x00\x00\x00", 5);
  PutChunk(png, "IHDR", ihdr);
  PutChunk(png, "IDAT", z);
  PutChunk(png, "IEND", "");
  return png;
}

TEST(PngRowDecoderTest, InvalidFilterByteIsAnError) {
  // Filter type 5 does not exist.
  std::string raw(1 + 4 * 4, '\0');
  raw[0] = 5;
  const std::string png = RgbaPngOfFilteredData(4, 1, raw);
  Result<std::vector<uint8_t>> rows = DecodeRows(png);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(rows.error().message.find("invalid row filter 5"), std::string::npos);
}

// Compressed data for two rows under a header that declares one: refused by both inflaters.
TEST(PngRowDecoderTest, MoreDataThanTheHeaderDeclaresIsAnError) {
  const std::string raw(2 * (1 + 4 * 4), '\0');  // two filter-0 rows of 4 RGBA pixels
  const std::string png = RgbaPngOfFilteredData(4, 1, raw);
  for (internal::PngInflate inflate : kBothInflaters) {
    Result<std::vector<uint8_t>> rows = DecodeRows(png, inflate);
    ASSERT_FALSE(rows.ok());
    EXPECT_EQ(rows.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(rows.error().message.find("more image data than the header's size"),
              std::string::npos)
        << rows.error().message;
  }
}

TEST(PngRowDecoderTest, PreviewChecksLimitsBeforeDecoding) {
  // 3000x3000 RGB declared over a few bytes of data: refused from the header alone, before any
  // buffer for it exists.
  const std::string bomb = testing::CraftPng(3000, 3000, 1000, 2);
  DecodeLimits limits;
  limits.max_pixels = 1'000'000;
  Result<EncodedImage> r = MakePreview(bomb, PreviewOptions{}, limits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kTooLarge);
  EXPECT_NE(r.error().message.find("3000x3000 = 9000000 pixels"), std::string::npos);
}

// The area downscale as it was before it streamed rows: whole image in, both passes per output
// row. The streaming version must give the same bytes.
std::vector<uint8_t> ReferenceAreaDownscale(const std::vector<uint8_t>& in, int w, int h, int ow,
                                            int oh) {
  auto spans = [](int n, int out) {
    std::vector<std::pair<int, std::vector<uint32_t>>> s(out);
    for (int o = 0; o < out; ++o) {
      const int64_t lo = static_cast<int64_t>(o) * n, hi = static_cast<int64_t>(o + 1) * n;
      s[o].first = static_cast<int>(lo / out);
      uint32_t total = 0;
      for (int i = s[o].first; i <= static_cast<int>((hi - 1) / out); ++i) {
        const int64_t a = std::max<int64_t>(lo, static_cast<int64_t>(i) * out);
        const int64_t b = std::min<int64_t>(hi, static_cast<int64_t>(i + 1) * out);
        s[o].second.push_back(static_cast<uint32_t>(((b - a) << 16) / n));
        total += s[o].second.back();
      }
      s[o].second.back() += 65536 - total;
    }
    return s;
  };
  const auto xs = spans(w, ow), ys = spans(h, oh);
  std::vector<uint8_t> out(static_cast<size_t>(ow) * oh * 4);
  for (int oy = 0; oy < oh; ++oy) {
    std::vector<uint64_t> acc(static_cast<size_t>(ow) * 4, 0);
    for (size_t k = 0; k < ys[oy].second.size(); ++k) {
      const uint8_t* row = &in[static_cast<size_t>(ys[oy].first + k) * w * 4];
      for (int ox = 0; ox < ow; ++ox) {
        for (int c = 0; c < 4; ++c) {
          uint32_t v = 0;
          for (size_t j = 0; j < xs[ox].second.size(); ++j) {
            v += row[(xs[ox].first + j) * 4 + c] * xs[ox].second[j];
          }
          acc[ox * 4 + c] += static_cast<uint64_t>(v) * ys[oy].second[k];
        }
      }
    }
    for (size_t i = 0; i < acc.size(); ++i) {
      out[static_cast<size_t>(oy) * ow * 4 + i] =
          static_cast<uint8_t>((acc[i] + (1ULL << 31)) >> 32);
    }
  }
  return out;
}

TEST(AreaDownscalerTest, StreamedRowsMatchWholeImageDownscale) {
  const Image img = testing::Photo(203, 151);
  for (auto [ow, oh] : {std::pair{203, 151}, {100, 75}, {101, 151}, {203, 1}, {1, 1}, {150, 112}}) {
    SCOPED_TRACE(std::to_string(ow) + "x" + std::to_string(oh));
    std::vector<uint8_t> streamed(static_cast<size_t>(ow) * oh * 4, 0xAB);
    {
      internal::AreaDownscaler down(img.width, img.height, streamed.data(), ow, oh);
      for (int y = 0; y < img.height; ++y) down.AddRow(img.Pixel(0, y));
    }
    EXPECT_EQ(streamed, ReferenceAreaDownscale(img.rgba, img.width, img.height, ow, oh));
    Result<Image> resized = Resize(img, ow, oh);
    ASSERT_TRUE(resized.ok());
    EXPECT_EQ(resized->rgba, streamed);
  }
}

TEST(AreaDownscalerTest, PngPreviewEqualsFullDecodeThenResize) {
  // PNG previews take the fused zlib + downscale path; the image must be what decoding in full
  // with stb and resizing gives. A flat, opaque-with-alpha image keeps the preview a PNG.
  Image img = testing::Photo(1000, 600);
  for (size_t i = 3; i < img.rgba.size(); i += 4) img.rgba[i] = static_cast<uint8_t>(i % 251);
  const std::string png = testing::PngOf(img);
  Result<EncodedImage> preview =
      MakePreview(png, PreviewOptions{.max_edge = 300, .max_bytes = 10 << 20});
  ASSERT_TRUE(preview.ok()) << preview.error().message;
  ASSERT_EQ(preview->mime_type, "image/png");
  Result<Image> got = Decode(preview->bytes);
  ASSERT_TRUE(got.ok());
  Result<Image> want = Resize(Decode(png).value(), 300, 180);
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(got->width, 300);
  EXPECT_EQ(got->height, 180);
  EXPECT_EQ(got->rgba, want->rgba);
}

}  // namespace
}  // namespace imgmcp::imaging
