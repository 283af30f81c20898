// Codec: everything that turns bytes into pixels and back. The only code that includes stb.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "imaging/image_backend.h"

namespace imgmcp::imaging {

enum class ImageFormat { kUnknown, kPng, kJpeg, kWebp, kGif };

// Format from magic bytes only. kUnknown when nothing matches.
ImageFormat SniffFormat(std::string_view bytes);
// "image/png" etc.; "" for kUnknown.
const char* MimeTypeOf(ImageFormat format);
// ".png", ".jpg", ".webp", ".gif"; ".bin" for kUnknown.
const char* FileExtensionOf(ImageFormat format);

struct ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  int width = 0;
  int height = 0;
};

struct DecodeLimits {
  int64_t max_pixels = 50'000'000;         // width*height refused above this, before allocating
  int64_t max_bytes = 64LL * 1024 * 1024;  // encoded size refused above this
};

// Reads format and dimensions from the header without decoding pixels. Errors: kInvalidArgument
// (not an image, truncated header, zero size), kTooLarge (over limits), kUnsupported.
Result<ImageInfo> ReadImageInfo(std::string_view bytes, const DecodeLimits& limits = {});

// Decoded pixels, always 8-bit RGBA, row-major, no padding.
struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgba;  // width * height * 4

  uint8_t* Pixel(int x, int y) { return &rgba[(static_cast<size_t>(y) * width + x) * 4]; }
  const uint8_t* Pixel(int x, int y) const {
    return &rgba[(static_cast<size_t>(y) * width + x) * 4];
  }
};

// Decodes with limits checked before any pixel buffer is allocated.
Result<Image> Decode(std::string_view bytes, const DecodeLimits& limits = {});

Result<std::string> EncodePng(const Image& image);
// PNG encoder settings (zlib level 0-9: higher is smaller and slower; see bench_imaging). Output is
// RGB when every pixel is opaque, else RGBA; rows use adaptive filtering. Same pixels and options
// -> same bytes.
struct PngOptions {
  int compression_level = 4;  // zlib 4: ~2.4x faster than 6 for ~25% more bytes
};
Result<std::string> EncodePng(const Image& image, const PngOptions& options);
Result<std::string> EncodeJpeg(const Image& image, int quality = 85);  // alpha dropped
// Lossy WebP at `quality` (1-100), alpha kept. kUnsupported when this build lacks libwebp
// (CanEncodeWebp() says so up front).
Result<std::string> EncodeWebp(const Image& image, int quality = 90);
bool CanEncodeWebp();

// Resamples to exactly width x height.
Result<Image> Resize(const Image& image, int width, int height);

struct PreviewOptions {
  int max_edge = 768;             // long edge in pixels
  size_t max_bytes = 600 * 1024;  // encoded size budget
};

// A preview: scaled so the long edge ≤ max_edge (never upscaled), encoded in the format that fits
// the byte budget best (PNG for small/flat images, else JPEG at decreasing quality, then smaller
// sizes). The result's mime_type is sniffed from its bytes.
Result<EncodedImage> MakePreview(std::string_view bytes, const PreviewOptions& options = {},
                                 const DecodeLimits& limits = {});

}  // namespace imgmcp::imaging
