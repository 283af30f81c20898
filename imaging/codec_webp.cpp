// WebP decode and encode: libwebp when this build has it (IMGMCP_HAVE_WEBP); otherwise WebP images
// can be stored and passed on, but not decoded (no preview, no local edits) or written, and say so.
#include <string>

#include "imaging/codec_internal.h"

#ifdef IMGMCP_HAVE_WEBP
#include <webp/decode.h>
#include <webp/encode.h>
#endif

namespace imgmcp::imaging::internal {

#ifdef IMGMCP_HAVE_WEBP

Result<PixelBuffer> DecodeWebp(std::string_view bytes, const ImageInfo& info) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  WebPBitstreamFeatures features;
  if (WebPGetFeatures(data, bytes.size(), &features) != VP8_STATUS_OK) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "could not decode image/webp image (truncated or corrupt)");
  }
  if (features.has_animation) {
    return MakeError(ErrorCode::kUnsupported,
                     "animated WebP images are not supported; send one frame as PNG, JPEG or WebP");
  }
  const int width = features.width;
  const int height = features.height;
  if (width != info.width || height != info.height) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "corrupt image/webp image: inconsistent dimensions in its header");
  }
  PixelBuffer out;
  out.width = width;
  out.height = height;
  out.vec.resize(out.size());  // the caller checked the pixel limit against `info`
  if (WebPDecodeRGBAInto(data, bytes.size(), out.vec.data(), out.vec.size(), width * 4) ==
      nullptr) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "could not decode image/webp image (truncated or corrupt)");
  }
  return out;
}

Result<std::string> EncodeWebpPixels(const uint8_t* rgba, int width, int height, int quality) {
  if (width > WEBP_MAX_DIMENSION || height > WEBP_MAX_DIMENSION) {
    return MakeError(ErrorCode::kUnsupported,
                     "WebP images are at most " + std::to_string(WEBP_MAX_DIMENSION) +
                         " pixels wide and high; this one is " + std::to_string(width) + "x" +
                         std::to_string(height));
  }
  uint8_t* out = nullptr;
  const size_t size =
      WebPEncodeRGBA(rgba, width, height, width * 4, static_cast<float>(quality), &out);
  if (size == 0 || out == nullptr) {
    WebPFree(out);
    return MakeError(ErrorCode::kInternal, "the WebP encoder failed");
  }
  std::string bytes(reinterpret_cast<const char*>(out), size);
  WebPFree(out);
  return bytes;
}

bool HaveWebpEncoder() { return true; }

#else

Result<std::string> EncodeWebpPixels(const uint8_t*, int, int, int) {
  return MakeError(ErrorCode::kUnsupported,
                   "this build cannot write WebP (no libwebp); use png or jpeg");
}

bool HaveWebpEncoder() { return false; }

Result<PixelBuffer> DecodeWebp(std::string_view, const ImageInfo& info) {
  return MakeError(ErrorCode::kUnsupported, "WebP images (" + std::to_string(info.width) + "x" +
                                                std::to_string(info.height) +
                                                ") cannot be decoded by this build; send PNG or "
                                                "JPEG");
}

#endif

}  // namespace imgmcp::imaging::internal
