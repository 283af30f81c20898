// Fuzzes the codec's untrusted-input entry points with small limits: SniffFormat, ReadImageInfo,
// Decode and MakePreview. Limits must hold before any pixel buffer is allocated, and what Decode
// returns must agree with ReadImageInfo.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "imaging/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgmcp::imaging;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  DecodeLimits limits;
  limits.max_pixels = 512 * 512;
  limits.max_bytes = 1 << 20;

  const ImageFormat format = SniffFormat(bytes);
  auto info = ReadImageInfo(bytes, limits);
  if (info.ok()) {
    if (info->format != format) std::abort();
    if (info->width <= 0 || info->height <= 0) std::abort();
    if (static_cast<int64_t>(info->width) * info->height > limits.max_pixels) std::abort();
  }
  auto image = Decode(bytes, limits);
  if (image.ok()) {
    if (image->width <= 0 || image->height <= 0) std::abort();
    if (static_cast<int64_t>(image->width) * image->height > limits.max_pixels) std::abort();
    if (image->rgba.size() != static_cast<size_t>(image->width) * image->height * 4) std::abort();
    if (info.ok() && (info->width != image->width || info->height != image->height)) std::abort();
    // Previews are the other consumer of untrusted bytes (tool results); keep them small.
    PreviewOptions preview;
    preview.max_edge = 32;
    preview.max_bytes = 16 * 1024;
    auto small = MakePreview(bytes, preview, limits);
    if (small.ok() && small->mime_type != MimeTypeOf(SniffFormat(small->bytes))) std::abort();
  }
  return 0;
}
