// Decoding (stb; libjpeg-turbo for JPEG when built with it) and the public encode/resize entry
// points. Limits are checked from the header before any pixel buffer exists.
#include "imaging/codec.h"

#include <stb_image.h>

#include <climits>
#include <cstring>
#include <string>
#include <utility>

#include "imaging/codec_internal.h"

namespace imgmcp::imaging {
namespace internal {

Result<PixelBuffer> DecodeWithStb(std::string_view bytes, const ImageInfo& info) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return MakeError(ErrorCode::kTooLarge, "image is over 2 GiB");
  }
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int len = static_cast<int>(bytes.size());
  // stb's own view of the header must agree with ours before it allocates anything.
  int w = 0, h = 0, channels = 0;
  if (!stbi_info_from_memory(data, len, &w, &h, &channels)) {
    const char* why = stbi_failure_reason();
    return MakeError(ErrorCode::kInvalidArgument, std::string("could not read ") +
                                                      MimeTypeOf(info.format) +
                                                      " image: " + (why ? why : "unknown error"));
  }
  if (w != info.width || h != info.height) {
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string("corrupt ") + MimeTypeOf(info.format) +
                         " image: inconsistent dimensions in its header");
  }
  PixelBuffer out;
  out.malloced.reset(stbi_load_from_memory(data, len, &w, &h, &channels, 4));
  if (!out.malloced) {
    const char* why = stbi_failure_reason();
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string("could not decode ") + MimeTypeOf(info.format) +
                         " image (truncated or corrupt): " + (why ? why : "unknown error"));
  }
  out.width = w;
  out.height = h;
  return out;
}

Result<PixelBuffer> DecodePixels(std::string_view bytes, const ImageInfo& info, int min_width,
                                 int min_height) {
  switch (info.format) {
    case ImageFormat::kWebp:
      return DecodeWebp(bytes, info);
    case ImageFormat::kJpeg: {
      Result<PixelBuffer> turbo = DecodeJpegTurbo(bytes, info, min_width, min_height);
      if (turbo.ok() || turbo.error().code != ErrorCode::kUnsupported) return turbo;
      return DecodeWithStb(bytes, info);
    }
    case ImageFormat::kPng: {
#if IMGMCP_HAVE_LIBDEFLATE
      // With libdeflate the row decoder is about twice as fast as stb (inflate dominates both);
      // with zlib alone it is no faster, so stb keeps the full-size decode there.
      PixelBuffer out;
      out.width = info.width;
      out.height = info.height;
      out.vec.resize(out.size());
      uint8_t* next_row = out.vec.data();
      const size_t row_bytes = static_cast<size_t>(info.width) * 4;
      Status rows = DecodePngRows(bytes, info, [&](const uint8_t* row) {
        std::memcpy(next_row, row, row_bytes);
        next_row += row_bytes;
      });
      if (rows.ok()) return out;
      if (rows.error().code != ErrorCode::kUnsupported) return rows.error();
#endif
      return DecodeWithStb(bytes, info);
    }
    case ImageFormat::kGif:
      return DecodeWithStb(bytes, info);
    case ImageFormat::kUnknown:
      break;
  }
  return MakeError(ErrorCode::kInvalidArgument, "not an image");
}

}  // namespace internal

Result<Image> Decode(std::string_view bytes, const DecodeLimits& limits) {
  ASSIGN_OR_RETURN(const ImageInfo info, ReadImageInfo(bytes, limits));
  ASSIGN_OR_RETURN(internal::PixelBuffer pixels, internal::DecodePixels(bytes, info, 0, 0));
  Image image;
  image.width = pixels.width;
  image.height = pixels.height;
  if (pixels.malloced) {
    image.rgba.assign(pixels.data(), pixels.data() + pixels.size());
  } else {
    image.rgba = std::move(pixels.vec);
  }
  return image;
}

namespace {

Status CheckImage(const Image& image) {
  if (image.width <= 0 || image.height <= 0 ||
      image.rgba.size() != static_cast<size_t>(image.width) * image.height * 4) {
    return MakeError(ErrorCode::kInvalidArgument, "image buffer does not match its size " +
                                                      std::to_string(image.width) + "x" +
                                                      std::to_string(image.height));
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> EncodePng(const Image& image) { return EncodePng(image, PngOptions{}); }

Result<std::string> EncodePng(const Image& image, const PngOptions& options) {
  RETURN_IF_ERROR(CheckImage(image));
  return internal::EncodePngPixels(image.rgba.data(), image.width, image.height,
                                   options.compression_level);
}

Result<std::string> EncodeJpeg(const Image& image, int quality) {
  RETURN_IF_ERROR(CheckImage(image));
  if (quality < 1 || quality > 100) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "JPEG quality must be 1-100, got " + std::to_string(quality));
  }
  return internal::EncodeJpegPixels(image.rgba.data(), image.width, image.height, quality);
}

Result<std::string> EncodeWebp(const Image& image, int quality) {
  RETURN_IF_ERROR(CheckImage(image));
  if (quality < 1 || quality > 100) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "WebP quality must be 1-100, got " + std::to_string(quality));
  }
  return internal::EncodeWebpPixels(image.rgba.data(), image.width, image.height, quality);
}

bool CanEncodeWebp() { return internal::HaveWebpEncoder(); }

Result<Image> Resize(const Image& image, int width, int height) {
  RETURN_IF_ERROR(CheckImage(image));
  if (width <= 0 || height <= 0) {
    return MakeError(ErrorCode::kInvalidArgument, "resize target must be at least 1x1, got " +
                                                      std::to_string(width) + "x" +
                                                      std::to_string(height));
  }
  if (static_cast<int64_t>(width) * height > DecodeLimits{}.max_pixels) {
    return MakeError(ErrorCode::kTooLarge,
                     "resize target " + std::to_string(width) + "x" + std::to_string(height) +
                         " is over the pixel limit " + std::to_string(DecodeLimits{}.max_pixels));
  }
  Image out;
  out.width = width;
  out.height = height;
  if (width == image.width && height == image.height) {
    out.rgba = image.rgba;
    return out;
  }
  out.rgba.resize(static_cast<size_t>(width) * height * 4);
  RETURN_IF_ERROR(internal::ResizePixels(image.rgba.data(), image.width, image.height,
                                         out.rgba.data(), width, height));
  return out;
}

}  // namespace imgmcp::imaging
