// Format sniffing and header parsing: dimensions without decoding a single pixel.
#include <cstdint>
#include <string>
#include <string_view>

#include "imaging/codec.h"
#include "imaging/codec_internal.h"

namespace imgmcp::imaging {
namespace {

uint32_t Be16(std::string_view b, size_t i) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(b[i])) << 8) | static_cast<uint8_t>(b[i + 1]);
}
uint32_t Be32(std::string_view b, size_t i) { return (Be16(b, i) << 16) | Be16(b, i + 2); }
uint32_t Le16(std::string_view b, size_t i) {
  return static_cast<uint8_t>(b[i]) | (static_cast<uint32_t>(static_cast<uint8_t>(b[i + 1])) << 8);
}
uint32_t Le24(std::string_view b, size_t i) {
  return Le16(b, i) | (static_cast<uint32_t>(static_cast<uint8_t>(b[i + 2])) << 16);
}

Error Truncated(const char* what) {
  return MakeError(ErrorCode::kInvalidArgument, std::string("truncated ") + what +
                                                    " header: the data ends before the image size");
}

Result<ImageInfo> PngInfo(std::string_view b) {
  // Signature (8) + IHDR length (4) + "IHDR" (4) + width (4) + height (4).
  if (b.size() < 24) return Truncated("PNG");
  if (b.substr(12, 4) != "IHDR") {
    return MakeError(ErrorCode::kInvalidArgument, "corrupt PNG: the first chunk is not IHDR");
  }
  uint32_t w = Be32(b, 16), h = Be32(b, 20);
  if (w > 0x7fffffffu || h > 0x7fffffffu) {
    return MakeError(ErrorCode::kInvalidArgument, "corrupt PNG: width or height exceeds 2^31-1");
  }
  return ImageInfo{ImageFormat::kPng, static_cast<int>(w), static_cast<int>(h)};
}

Result<ImageInfo> JpegInfo(std::string_view b) {
  size_t i = 2;
  while (true) {
    // Find the next marker: 0xFF, optional fill bytes 0xFF, then the marker code.
    if (i >= b.size()) return Truncated("JPEG");
    if (static_cast<uint8_t>(b[i]) != 0xFF) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "corrupt JPEG: expected a marker at byte " + std::to_string(i));
    }
    while (i < b.size() && static_cast<uint8_t>(b[i]) == 0xFF) ++i;
    if (i >= b.size()) return Truncated("JPEG");
    uint8_t marker = static_cast<uint8_t>(b[i++]);
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // no length
    if (marker == 0xD9 || marker == 0xDA) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "corrupt JPEG: no frame header (SOF) before the image data");
    }
    if (i + 2 > b.size()) return Truncated("JPEG");
    uint32_t len = Be16(b, i);
    if (len < 2) return MakeError(ErrorCode::kInvalidArgument, "corrupt JPEG: bad segment length");
    bool sof =
        marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (sof) {
      // length(2) precision(1) height(2) width(2)
      if (i + 7 > b.size()) return Truncated("JPEG");
      return ImageInfo{ImageFormat::kJpeg, static_cast<int>(Be16(b, i + 5)),
                       static_cast<int>(Be16(b, i + 3))};
    }
    i += len;
  }
}

Result<ImageInfo> GifInfo(std::string_view b) {
  if (b.size() < 10) return Truncated("GIF");
  return ImageInfo{ImageFormat::kGif, static_cast<int>(Le16(b, 6)), static_cast<int>(Le16(b, 8))};
}

Result<ImageInfo> WebpInfo(std::string_view b) {
  if (b.size() < 30) return Truncated("WebP");
  std::string_view chunk = b.substr(12, 4);
  if (chunk == "VP8 ") {
    // Frame tag (3 bytes) then start code 9d 01 2a, then 14-bit width and height.
    if (static_cast<uint8_t>(b[23]) != 0x9d || static_cast<uint8_t>(b[24]) != 0x01 ||
        static_cast<uint8_t>(b[25]) != 0x2a) {
      return MakeError(ErrorCode::kInvalidArgument, "corrupt WebP: bad VP8 start code");
    }
    return ImageInfo{ImageFormat::kWebp, static_cast<int>(Le16(b, 26) & 0x3fff),
                     static_cast<int>(Le16(b, 28) & 0x3fff)};
  }
  if (chunk == "VP8L") {
    if (static_cast<uint8_t>(b[20]) != 0x2f) {
      return MakeError(ErrorCode::kInvalidArgument, "corrupt WebP: bad VP8L signature");
    }
    uint32_t bits = Le24(b, 21) | (static_cast<uint32_t>(static_cast<uint8_t>(b[24])) << 24);
    return ImageInfo{ImageFormat::kWebp, static_cast<int>((bits & 0x3fff) + 1),
                     static_cast<int>(((bits >> 14) & 0x3fff) + 1)};
  }
  if (chunk == "VP8X") {
    return ImageInfo{ImageFormat::kWebp, static_cast<int>(Le24(b, 24) + 1),
                     static_cast<int>(Le24(b, 27) + 1)};
  }
  return MakeError(ErrorCode::kInvalidArgument, "corrupt WebP: unknown first chunk");
}

// The format and size from the header of whichever format the magic bytes name.
Result<ImageInfo> HeaderInfo(std::string_view bytes) {
  switch (SniffFormat(bytes)) {
    case ImageFormat::kPng:
      return PngInfo(bytes);
    case ImageFormat::kJpeg:
      return JpegInfo(bytes);
    case ImageFormat::kGif:
      return GifInfo(bytes);
    case ImageFormat::kWebp:
      return WebpInfo(bytes);
    case ImageFormat::kUnknown:
      break;
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   "not an image: the bytes are not PNG, JPEG, WebP or GIF (unrecognised magic "
                   "bytes)");
}

}  // namespace

ImageFormat SniffFormat(std::string_view b) {
  if (b.size() >= 8 && b.substr(0, 8) == std::string_view("\x89PNG\r\n\x1a\n", 8)) {
    return ImageFormat::kPng;
  }
  if (b.size() >= 3 && static_cast<uint8_t>(b[0]) == 0xFF && static_cast<uint8_t>(b[1]) == 0xD8 &&
      static_cast<uint8_t>(b[2]) == 0xFF) {
    return ImageFormat::kJpeg;
  }
  if (b.size() >= 6 && (b.substr(0, 6) == "GIF87a" || b.substr(0, 6) == "GIF89a")) {
    return ImageFormat::kGif;
  }
  if (b.size() >= 12 && b.substr(0, 4) == "RIFF" && b.substr(8, 4) == "WEBP") {
    return ImageFormat::kWebp;
  }
  return ImageFormat::kUnknown;
}

const char* MimeTypeOf(ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng:
      return "image/png";
    case ImageFormat::kJpeg:
      return "image/jpeg";
    case ImageFormat::kWebp:
      return "image/webp";
    case ImageFormat::kGif:
      return "image/gif";
    case ImageFormat::kUnknown:
      break;
  }
  return "";
}

const char* FileExtensionOf(ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng:
      return ".png";
    case ImageFormat::kJpeg:
      return ".jpg";
    case ImageFormat::kWebp:
      return ".webp";
    case ImageFormat::kGif:
      return ".gif";
    case ImageFormat::kUnknown:
      break;
  }
  return ".bin";
}

Result<ImageInfo> ReadImageInfo(std::string_view bytes, const DecodeLimits& limits) {
  if (bytes.empty()) return MakeError(ErrorCode::kInvalidArgument, "not an image: no bytes");
  RETURN_IF_ERROR(internal::CheckByteLimit(bytes.size(), limits));
  ASSIGN_OR_RETURN(const ImageInfo info, HeaderInfo(bytes));
  if (info.width <= 0 || info.height <= 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string("invalid ") + MimeTypeOf(info.format) + " image: zero size (" +
                         std::to_string(info.width) + "x" + std::to_string(info.height) + ")");
  }
  RETURN_IF_ERROR(internal::CheckPixelLimit(info.width, info.height, limits));
  return info;
}

namespace internal {

Status CheckPixelLimit(int64_t width, int64_t height, const DecodeLimits& limits) {
  int64_t pixels = width * height;
  if (pixels > limits.max_pixels) {
    return MakeError(ErrorCode::kTooLarge, "image is " + std::to_string(width) + "x" +
                                               std::to_string(height) + " = " +
                                               std::to_string(pixels) + " pixels; the limit is " +
                                               std::to_string(limits.max_pixels));
  }
  return Status::Ok();
}

Status CheckByteLimit(size_t size, const DecodeLimits& limits) {
  if (static_cast<int64_t>(size) > limits.max_bytes) {
    return MakeError(ErrorCode::kTooLarge, "image is " + std::to_string(size) +
                                               " bytes; the limit is " +
                                               std::to_string(limits.max_bytes));
  }
  return Status::Ok();
}

}  // namespace internal
}  // namespace imgmcp::imaging
