// Internals shared by the codec files (codec*.cpp, preview.cpp). Not part of the public API.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "imaging/codec.h"

namespace imgmcp::imaging::internal {

struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};

// Decoded RGBA8 pixels owned either by a vector or by a malloc'd decoder buffer, so the decoder's
// output is used in place instead of being copied.
struct PixelBuffer {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> vec;
  std::unique_ptr<uint8_t, FreeDeleter> malloced;

  const uint8_t* data() const { return malloced ? malloced.get() : vec.data(); }
  uint8_t* mutable_data() { return malloced ? malloced.get() : vec.data(); }
  size_t size() const { return static_cast<size_t>(width) * height * 4; }
};

// Checks the encoded size and width*height against `limits`; kTooLarge with the numbers if over.
Status CheckPixelLimit(int64_t width, int64_t height, const DecodeLimits& limits);
Status CheckByteLimit(size_t size, const DecodeLimits& limits);

// Decodes `bytes` (already vetted by ReadImageInfo into `info`) to RGBA8. When the decoder can
// shrink while decoding (JPEG DCT scaling), it may return a smaller image, but never one smaller
// than min_width x min_height. Pass 0,0 for full size.
Result<PixelBuffer> DecodePixels(std::string_view bytes, const ImageInfo& info, int min_width,
                                 int min_height);

// stb-based decoding (PNG, JPEG, GIF, and JPEG fallback when libjpeg-turbo is absent).
Result<PixelBuffer> DecodeWithStb(std::string_view bytes, const ImageInfo& info);
// JPEG decoding through libjpeg-turbo; kUnsupported when this build lacks it or it refuses the
// file (e.g. CMYK), in which case the caller falls back to stb.
Result<PixelBuffer> DecodeJpegTurbo(std::string_view bytes, const ImageInfo& info, int min_width,
                                    int min_height);
// WebP decoding through libwebp (lossy, lossless, alpha). kUnsupported for animated WebP and
// when this build lacks libwebp.
Result<PixelBuffer> DecodeWebp(std::string_view bytes, const ImageInfo& info);

// Receives each decoded row, top to bottom, as width*4 bytes of RGBA8 (valid only during the call).
using PngRowSink = std::function<void(const uint8_t* rgba)>;
// How DecodePngRows inflates: kAuto takes libdeflate (whole image) when built with it and the
// filtered data is not huge, else zlib streaming; kZlibStreaming forces the latter (tests).
enum class PngInflate { kAuto, kZlibStreaming };
// Decodes 8-bit RGB/RGBA non-interlaced PNGs (no tRNS) one row at a time, with the same pixels as
// stb. kUnsupported, before any row is produced, for every other layout: the caller uses stb.
// kInvalidArgument when the data is truncated or corrupt (rows may already have been produced).
// `info` must come from ReadImageInfo, so the pixel limit is already checked.
Status DecodePngRows(std::string_view bytes, const ImageInfo& info, const PngRowSink& sink,
                     PngInflate inflate = PngInflate::kAuto);

// Area-average (box) downscale fed one source row at a time, so a decoder can stream into it
// without a full-size buffer. Requires ow <= w and oh <= h. Same pixels as ResizePixels.
class AreaDownscaler {
 public:
  AreaDownscaler(int w, int h, uint8_t* out, int ow, int oh);
  ~AreaDownscaler();
  AreaDownscaler(const AreaDownscaler&) = delete;
  AreaDownscaler& operator=(const AreaDownscaler&) = delete;
  // Source rows in order 0..h-1, w*4 bytes each.
  void AddRow(const uint8_t* rgba);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// PNG with zlib at `level` (0-9); writes RGB when every pixel is opaque.
Result<std::string> EncodePngPixels(const uint8_t* rgba, int width, int height, int level);
// JPEG at `quality` (1-100); alpha is ignored.
Result<std::string> EncodeJpegPixels(const uint8_t* rgba, int width, int height, int quality);
// Lossy WebP at `quality` (1-100) through libwebp; kUnsupported without it.
Result<std::string> EncodeWebpPixels(const uint8_t* rgba, int width, int height, int quality);
bool HaveWebpEncoder();
// Resamples RGBA8 `in` (w x h) into `out` (ow x oh, preallocated).
Status ResizePixels(const uint8_t* in, int w, int h, uint8_t* out, int ow, int oh);

}  // namespace imgmcp::imaging::internal
