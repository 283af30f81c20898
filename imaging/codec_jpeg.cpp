// JPEG encode/decode: libjpeg-turbo when this build has it (IMGMCP_HAVE_TURBOJPEG), else stb.
#include <cstring>
#include <memory>
#include <string>

#include "imaging/codec_internal.h"

#ifdef IMGMCP_HAVE_TURBOJPEG
#include <turbojpeg.h>
#else
#include <stb_image_write.h>
#endif

namespace imgmcp::imaging::internal {

#ifdef IMGMCP_HAVE_TURBOJPEG

namespace {

struct TjDeleter {
  void operator()(void* h) const { tjDestroy(h); }
};
using TjHandle = std::unique_ptr<void, TjDeleter>;

std::string TjError(void* handle) {
  const char* msg = tjGetErrorStr2(handle);
  return msg ? msg : "unknown libjpeg-turbo error";
}

}  // namespace

Result<std::string> EncodeJpegPixels(const uint8_t* rgba, int width, int height, int quality) {
  TjHandle handle(tjInitCompress());
  if (!handle) return MakeError(ErrorCode::kInternal, "libjpeg-turbo: tjInitCompress failed");
  const unsigned long capacity = tjBufSize(width, height, TJSAMP_420);
  if (capacity == static_cast<unsigned long>(-1)) {
    return MakeError(ErrorCode::kTooLarge, "image too large for JPEG");
  }
  // Compress straight into the result string: no intermediate buffer, no copy.
  std::string out(capacity, '\0');
  auto* buf = reinterpret_cast<unsigned char*>(out.data());
  unsigned long size = capacity;
  if (tjCompress2(handle.get(), rgba, width, 0, height, TJPF_RGBA, &buf, &size, TJSAMP_420, quality,
                  TJFLAG_NOREALLOC) != 0) {
    return MakeError(ErrorCode::kInternal, "JPEG encoding failed: " + TjError(handle.get()));
  }
  out.resize(size);
  return out;
}

Result<PixelBuffer> DecodeJpegTurbo(std::string_view bytes, const ImageInfo& info, int min_width,
                                    int min_height) {
  TjHandle handle(tjInitDecompress());
  if (!handle) return MakeError(ErrorCode::kInternal, "libjpeg-turbo: tjInitDecompress failed");
  const auto* src = reinterpret_cast<const unsigned char*>(bytes.data());
  const unsigned long len = static_cast<unsigned long>(bytes.size());
  int w = 0, h = 0, subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(handle.get(), src, len, &w, &h, &subsamp, &colorspace) != 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "could not read image/jpeg header: " + TjError(handle.get()));
  }
  if (w != info.width || h != info.height) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "corrupt image/jpeg image: inconsistent dimensions in its header");
  }
  if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK) {
    return MakeError(ErrorCode::kUnsupported, "CMYK JPEG: left to the stb decoder");
  }
  // Shrink-on-load: the smallest 1/n scale (n = 1, 2, 4, 8) that stays >= the requested minimum.
  int sw = w, sh = h;
  if (min_width > 0 && min_height > 0) {
    for (int denom : {8, 4, 2}) {
      const int cw = (w + denom - 1) / denom, ch = (h + denom - 1) / denom;
      if (cw >= min_width && ch >= min_height) {
        sw = cw;
        sh = ch;
        break;
      }
    }
  }
  PixelBuffer out;
  out.width = sw;
  out.height = sh;
  out.vec.resize(static_cast<size_t>(sw) * sh * 4);
  int flags = TJFLAG_STOPONWARNING;
  if (tjDecompress2(handle.get(), src, len, out.vec.data(), sw, 0, sh, TJPF_RGBA, flags) != 0) {
    std::string why = TjError(handle.get());
    const bool truncated = why.find("Premature end") != std::string::npos;
    if (tjGetErrorCode(handle.get()) == TJERR_WARNING && !truncated) {
      // A benign warning (e.g. stray bytes between markers): decode again, tolerating it.
      flags = 0;
      if (tjDecompress2(handle.get(), src, len, out.vec.data(), sw, 0, sh, TJPF_RGBA, flags) == 0) {
        return out;
      }
      why = TjError(handle.get());
    }
    return MakeError(ErrorCode::kInvalidArgument, std::string("could not decode image/jpeg image") +
                                                      (truncated ? " (truncated)" : " (corrupt)") +
                                                      ": " + why);
  }
  return out;
}

#else  // stb fallback

Result<std::string> EncodeJpegPixels(const uint8_t* rgba, int width, int height, int quality) {
  std::string out;
  auto sink = [](void* ctx, void* data, int size) {
    static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), size);
  };
  if (!stbi_write_jpg_to_func(sink, &out, width, height, 4, rgba, quality)) {
    return MakeError(ErrorCode::kInternal, "JPEG encoding failed");
  }
  return out;
}

Result<PixelBuffer> DecodeJpegTurbo(std::string_view, const ImageInfo&, int, int) {
  return MakeError(ErrorCode::kUnsupported, "built without libjpeg-turbo");
}

#endif

}  // namespace imgmcp::imaging::internal
