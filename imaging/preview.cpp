// MakePreview: a small inline rendition of an image for clients (long edge and byte budget).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "imaging/codec.h"
#include "imaging/codec_internal.h"

namespace imgmcp::imaging {
namespace {

using internal::PixelBuffer;

// True when a large share of sampled pixels repeat their left neighbour: flat art, diagrams,
// screenshots — content PNG compresses well.
bool LooksFlat(const uint8_t* rgba, int w, int h) {
  uint64_t same = 0, total = 0;
  const int step = std::max(1, h / 64);
  for (int y = 0; y < h; y += step) {
    const uint8_t* row = rgba + static_cast<size_t>(y) * w * 4;
    for (int x = 1; x < w; ++x) {
      same += std::memcmp(row + x * 4, row + (x - 1) * 4, 4) == 0;
      ++total;
    }
  }
  return total == 0 || same * 10 >= total * 7;
}

bool IsOpaque(const uint8_t* rgba, size_t pixels) {
  for (size_t i = 0; i < pixels; ++i) {
    if (rgba[i * 4 + 3] != 255) return false;
  }
  return true;
}

// Composites over white so transparent areas do not turn black in JPEG.
void FlattenOnWhite(uint8_t* rgba, size_t pixels) {
  for (size_t i = 0; i < pixels; ++i) {
    uint8_t* p = rgba + i * 4;
    const uint32_t a = p[3];
    for (int c = 0; c < 3; ++c)
      p[c] = static_cast<uint8_t>((p[c] * a + 255 * (255 - a) + 127) / 255);
    p[3] = 255;
  }
}

Result<PixelBuffer> Shrink(const PixelBuffer& src, int w, int h) {
  PixelBuffer out;
  out.width = w;
  out.height = h;
  out.vec.resize(static_cast<size_t>(w) * h * 4);
  RETURN_IF_ERROR(internal::ResizePixels(src.data(), src.width, src.height, out.vec.data(), w, h));
  return out;
}

// PNG straight to the preview size: zlib rows streamed into the area downscaler, no full-size
// RGBA buffer. Same pixels as decoding in full and then Shrink (same area filter, integer sums).
// Any failure (a layout the zlib path leaves to stb, or corrupt data) falls back to stb.
Result<PixelBuffer> DecodePngShrunk(std::string_view bytes, const ImageInfo& info, int w, int h) {
  PixelBuffer out;
  out.width = w;
  out.height = h;
  out.vec.resize(static_cast<size_t>(w) * h * 4);
  {
    internal::AreaDownscaler down(info.width, info.height, out.vec.data(), w, h);
    if (internal::DecodePngRows(bytes, info, [&](const uint8_t* row) { down.AddRow(row); })) {
      return out;
    }
  }
  ASSIGN_OR_RETURN(const PixelBuffer full, internal::DecodeWithStb(bytes, info));
  return Shrink(full, w, h);
}

EncodedImage Encoded(std::string bytes) {
  EncodedImage e;
  e.mime_type = MimeTypeOf(SniffFormat(bytes));
  e.bytes = std::move(bytes);
  return e;
}

}  // namespace

Result<EncodedImage> MakePreview(std::string_view bytes, const PreviewOptions& options,
                                 const DecodeLimits& limits) {
  if (options.max_edge < 1) {
    return MakeError(ErrorCode::kInvalidArgument, "preview max_edge must be at least 1");
  }
  ASSIGN_OR_RETURN(const ImageInfo info, ReadImageInfo(bytes, limits));
  const int long_edge = std::max(info.width, info.height);
  if (long_edge <= options.max_edge && bytes.size() <= options.max_bytes &&
      (info.format == ImageFormat::kPng || info.format == ImageFormat::kJpeg)) {
    return Encoded(std::string(bytes));
  }
  // Target size: long edge <= max_edge, never upscaled, at least 1 px.
  int tw = info.width, th = info.height;
  if (long_edge > options.max_edge) {
    tw = std::max<int>(
        1, static_cast<int>((static_cast<int64_t>(info.width) * options.max_edge + long_edge / 2) /
                            long_edge));
    th = std::max<int>(
        1, static_cast<int>((static_cast<int64_t>(info.height) * options.max_edge + long_edge / 2) /
                            long_edge));
  }
  ASSIGN_OR_RETURN(PixelBuffer pixels,
                   info.format == ImageFormat::kPng && (tw < info.width || th < info.height)
                       ? DecodePngShrunk(bytes, info, tw, th)
                       : internal::DecodePixels(bytes, info, tw, th));
  if (pixels.width != tw || pixels.height != th) {
    ASSIGN_OR_RETURN(pixels, Shrink(pixels, tw, th));
  }

  const bool opaque = IsOpaque(pixels.data(), static_cast<size_t>(tw) * th);
  if (!opaque || LooksFlat(pixels.data(), tw, th) || static_cast<int64_t>(tw) * th <= 128 * 128) {
    ASSIGN_OR_RETURN(std::string png, internal::EncodePngPixels(pixels.data(), tw, th,
                                                                PngOptions{}.compression_level));
    if (png.size() <= options.max_bytes) return Encoded(std::move(png));
  }
  if (!opaque) FlattenOnWhite(pixels.mutable_data(), static_cast<size_t>(tw) * th);
  for (int quality : {85, 75, 60, 45}) {
    ASSIGN_OR_RETURN(std::string jpeg, internal::EncodeJpegPixels(pixels.data(), tw, th, quality));
    if (jpeg.size() <= options.max_bytes) return Encoded(std::move(jpeg));
  }
  // Still over budget: shrink by 3/4 per step at a middling quality.
  while (tw > 1 || th > 1) {
    tw = std::max(1, tw * 3 / 4);
    th = std::max(1, th * 3 / 4);
    ASSIGN_OR_RETURN(pixels, Shrink(pixels, tw, th));
    ASSIGN_OR_RETURN(std::string jpeg, internal::EncodeJpegPixels(pixels.data(), tw, th, 60));
    if (jpeg.size() <= options.max_bytes) return Encoded(std::move(jpeg));
  }
  return MakeError(ErrorCode::kInvalidArgument, "preview byte budget of " +
                                                    std::to_string(options.max_bytes) +
                                                    " bytes is too small for even a 1x1 image");
}

}  // namespace imgmcp::imaging
