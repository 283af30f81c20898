// PNG decoding for the common layout (8-bit RGB/RGBA, not interlaced), row by row. stb_image's
// own inflate was over half of a 2048² preview's CPU. libdeflate (when built with it) inflates
// the whole image at once about twice as fast as zlib; zlib streams rows for images whose
// filtered data would be too big to hold, and when libdeflate is absent. Either way the caller
// gets rows, so a preview downscales without a full-size RGBA buffer. Every other layout
// (palette, gray, 16-bit, interlaced, tRNS colour keys) is left to stb.
#include <zlib.h>
#if IMGMCP_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "imaging/codec_internal.h"

namespace imgmcp::imaging::internal {
namespace {

constexpr uint32_t kStbMaxDimension = 1u << 24;  // stb's limit; larger files go to stb to refuse

uint32_t Be32(const uint8_t* p) {
  return (static_cast<uint32_t>(p[0]) << 24) | (static_cast<uint32_t>(p[1]) << 16) |
         (static_cast<uint32_t>(p[2]) << 8) | p[3];
}

Error Corrupt(const std::string& why) {
  return MakeError(ErrorCode::kInvalidArgument,
                   "could not decode image/png image (truncated or corrupt): " + why);
}

Error Unsupported(const std::string& why) {
  return MakeError(ErrorCode::kUnsupported, "PNG layout left to stb: " + why);
}

// Same predictor as the PNG spec (and stb): ties prefer a, then b. Written with selects, not
// branches: on photo-like rows the branches mispredict about half the time.
inline uint8_t Paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  const int bc = pb <= pc ? b : c;
  return static_cast<uint8_t>(pa <= pb && pa <= pc ? a : bc);
}

// Reverses one row's filter in place. `prev` is the previous unfiltered row (zeros for row 0,
// which makes Up/Average/Paeth reduce to what the spec defines for the first row).
template <int kBpp>
bool Unfilter(uint8_t filter, uint8_t* cur, const uint8_t* prev, size_t n) {
  switch (filter) {
    case 0:
      return true;
    case 1:
      for (size_t i = kBpp; i < n; ++i) cur[i] = static_cast<uint8_t>(cur[i] + cur[i - kBpp]);
      return true;
    case 2:
      for (size_t i = 0; i < n; ++i) cur[i] = static_cast<uint8_t>(cur[i] + prev[i]);
      return true;
    case 3:
      for (size_t i = 0; i < kBpp; ++i) cur[i] = static_cast<uint8_t>(cur[i] + (prev[i] >> 1));
      for (size_t i = kBpp; i < n; ++i) {
        cur[i] = static_cast<uint8_t>(cur[i] + ((cur[i - kBpp] + prev[i]) >> 1));
      }
      return true;
    case 4:
      for (size_t i = 0; i < kBpp; ++i) cur[i] = static_cast<uint8_t>(cur[i] + prev[i]);
      for (size_t i = kBpp; i < n; ++i) {
        cur[i] = static_cast<uint8_t>(cur[i] + Paeth(cur[i - kBpp], prev[i], prev[i - kBpp]));
      }
      return true;
    default:
      return false;
  }
}

// Filtered image data (a filter byte + one row, per row) bigger than this is streamed through
// zlib instead of inflated whole with libdeflate.
constexpr size_t kWholeInflateMaxBytes = size_t{96} << 20;

// Where the rows' filtered bytes come from: Read() fills exactly n bytes of the next rows, and
// Finish() checks the stream ends right after the last row.
class RowSource {
 public:
  virtual ~RowSource() = default;
  virtual Status Read(uint8_t* out, size_t n) = 0;
  virtual Status Finish() = 0;
};

// Owns the z_stream so every exit path releases zlib's state.
class Inflater final : public RowSource {
 public:
  // `idat` holds the raw deflate data: the caller has checked and removed the 2-byte zlib header.
  explicit Inflater(std::vector<std::string_view> idat) : idat_(std::move(idat)) {}
  ~Inflater() {
    if (initialized_) inflateEnd(&z_);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  Status Init() {
    // Raw deflate (negative window bits): like stb, the trailing Adler-32 is not verified, which
    // also saves a pass over every decoded byte.
    if (inflateInit2(&z_, -15) != Z_OK)
      return MakeError(ErrorCode::kInternal, "zlib inflateInit failed");
    initialized_ = true;
    return Status::Ok();
  }

  // Fills exactly `n` bytes, pulling IDAT chunks as needed.
  Status Read(uint8_t* out, size_t n) override {
    z_.next_out = out;
    z_.avail_out = static_cast<uInt>(n);
    while (z_.avail_out > 0) {
      if (z_.avail_in == 0 && !NextChunk()) return Corrupt("the image data ends early");
      const int ret = inflate(&z_, Z_NO_FLUSH);
      if (ret == Z_STREAM_END) {
        if (z_.avail_out > 0) return Corrupt("the image data ends early");
        ended_ = true;
      } else if (ret != Z_OK && ret != Z_BUF_ERROR) {
        return Corrupt(std::string("bad compressed data (") + (z_.msg ? z_.msg : "zlib error") +
                       ")");
      }
    }
    return Status::Ok();
  }

  // After the last row the deflate stream must end with no more pixel data.
  Status Finish() override {
    uint8_t extra = 0;
    while (!ended_) {
      z_.next_out = &extra;
      z_.avail_out = 1;
      if (z_.avail_in == 0 && !NextChunk()) return Corrupt("the compressed stream is unterminated");
      const int ret = inflate(&z_, Z_NO_FLUSH);
      if (z_.avail_out == 0) return Corrupt("more image data than the header's size");
      if (ret == Z_STREAM_END) {
        ended_ = true;
      } else if (ret != Z_OK && ret != Z_BUF_ERROR) {
        return Corrupt(std::string("bad compressed data (") + (z_.msg ? z_.msg : "zlib error") +
                       ")");
      }
    }
    return Status::Ok();
  }

 private:
  bool NextChunk() {
    while (next_ < idat_.size()) {
      std::string_view c = idat_[next_++];
      if (c.empty()) continue;
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(c.data()));
      z_.avail_in = static_cast<uInt>(c.size());
      return true;
    }
    return false;
  }

  z_stream z_{};
  bool initialized_ = false;
  bool ended_ = false;
  std::vector<std::string_view> idat_;
  size_t next_ = 0;
};

#if IMGMCP_HAVE_LIBDEFLATE
// Inflates all of the image data at once into a buffer of exactly the size the header implies;
// Read() then hands out rows from it.
class WholeInflater final : public RowSource {
 public:
  static Result<std::unique_ptr<WholeInflater>> Inflate(const std::vector<std::string_view>& idat,
                                                        size_t filtered_bytes) {
    std::string joined;  // the deflate stream, contiguous (a PNG splits it into IDAT chunks)
    std::string_view in;
    if (idat.size() == 1) {
      in = idat[0];
    } else {
      size_t total = 0;
      for (std::string_view c : idat) total += c.size();
      joined.reserve(total);
      for (std::string_view c : idat) joined.append(c);
      in = joined;
    }
    auto self = std::unique_ptr<WholeInflater>(new WholeInflater(filtered_bytes));
    std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> d(
        libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
    if (d == nullptr) return MakeError(ErrorCode::kResourceExhausted, "libdeflate out of memory");
    size_t consumed = 0;
    size_t produced = 0;
    const libdeflate_result r = libdeflate_deflate_decompress_ex(
        d.get(), in.data(), in.size(), self->data_.get(), filtered_bytes, &consumed, &produced);
    if (r == LIBDEFLATE_INSUFFICIENT_SPACE)
      return Corrupt("more image data than the header's size");
    if (r != LIBDEFLATE_SUCCESS) return Corrupt("bad compressed data");
    if (produced < filtered_bytes) return Corrupt("the image data ends early");
    return self;
  }

  Status Read(uint8_t* out, size_t n) override {
    if (filtered_bytes_ - pos_ < n) return Corrupt("the image data ends early");
    std::memcpy(out, data_.get() + pos_, n);
    pos_ += n;
    return Status::Ok();
  }
  Status Finish() override { return Status::Ok(); }  // checked when inflating

 private:
  explicit WholeInflater(size_t filtered_bytes)
      : data_(new uint8_t[filtered_bytes]), filtered_bytes_(filtered_bytes) {}
  std::unique_ptr<uint8_t[]> data_;
  size_t filtered_bytes_;
  size_t pos_ = 0;
};
#endif

// The source of the filtered rows: libdeflate all at once when available and small enough, else
// zlib streaming.
Result<std::unique_ptr<RowSource>> OpenRows(std::vector<std::string_view> idat,
                                            size_t filtered_bytes, PngInflate inflate) {
#if IMGMCP_HAVE_LIBDEFLATE
  if (inflate == PngInflate::kAuto && filtered_bytes <= kWholeInflateMaxBytes) {
    ASSIGN_OR_RETURN(std::unique_ptr<WholeInflater> whole,
                     WholeInflater::Inflate(idat, filtered_bytes));
    return std::unique_ptr<RowSource>(std::move(whole));
  }
#else
  (void)kWholeInflateMaxBytes;
  (void)filtered_bytes;
  (void)inflate;
#endif
  auto inflater = std::make_unique<Inflater>(std::move(idat));
  RETURN_IF_ERROR(inflater->Init());
  return std::unique_ptr<RowSource>(std::move(inflater));
}

// What DecodePngRows needs from IHDR.
struct PngLayout {
  uint32_t width = 0;
  uint32_t height = 0;
  int channels = 0;  // 3 (RGB) or 4 (RGBA)

  size_t stride() const { return static_cast<size_t>(width) * channels; }
  // The inflated image data: a filter byte and one row, per row.
  size_t filtered_bytes() const { return static_cast<size_t>(height) * (stride() + 1); }
};

// Checks the signature and IHDR against `info`; kUnsupported for any layout but 8-bit RGB/RGBA
// without interlacing.
Result<PngLayout> ReadLayout(std::string_view bytes, const ImageInfo& info) {
  const auto* b = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() < 8 + 25 || std::memcmp(b, "\x89PNG\r\n\x1a\n", 8) != 0 || Be32(b + 8) != 13 ||
      std::memcmp(b + 12, "IHDR", 4) != 0) {
    return Corrupt("bad signature or IHDR");
  }
  const uint8_t* ihdr = b + 16;
  const uint32_t w = Be32(ihdr), h = Be32(ihdr + 4);
  const uint8_t depth = ihdr[8], color = ihdr[9], compression = ihdr[10], filter = ihdr[11],
                interlace = ihdr[12];
  if (static_cast<int64_t>(w) != info.width || static_cast<int64_t>(h) != info.height || w == 0 ||
      h == 0) {
    return Corrupt("inconsistent dimensions in its header");
  }
  if (depth != 8 || (color != 2 && color != 6) || interlace != 0 || compression != 0 ||
      filter != 0 || w > kStbMaxDimension || h > kStbMaxDimension) {
    return Unsupported("not 8-bit RGB/RGBA non-interlaced");
  }
  return PngLayout{w, h, color == 6 ? 4 : 3};
}

// The IDAT chunks' data, in order, from the chunks after IHDR up to IEND. A chunk that changes the
// pixels (tRNS, PLTE, any other critical chunk) is kUnsupported: stb's to accept or refuse.
Result<std::vector<std::string_view>> ImageDataChunks(std::string_view bytes) {
  const auto* b = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t size = bytes.size();
  std::vector<std::string_view> idat;
  for (size_t pos = 8 + 25;;) {
    if (size - pos < 12) return Corrupt("the file ends before its IEND chunk");
    const uint32_t len = Be32(b + pos);
    const uint8_t* type = b + pos + 4;
    if (len > 0x7fffffffu || size - pos - 12 < len) {
      return Corrupt("a chunk runs past the end of the data");
    }
    if (std::memcmp(type, "IEND", 4) == 0) break;
    if (std::memcmp(type, "IDAT", 4) == 0) {
      idat.push_back(bytes.substr(pos + 8, len));
    } else if (std::memcmp(type, "tRNS", 4) == 0 || (type[0] & 0x20) == 0) {
      return Unsupported(std::string("chunk ") +
                         std::string(reinterpret_cast<const char*>(type), 4));
    }
    pos += 12 + static_cast<size_t>(len);
  }
  if (idat.empty()) return Corrupt("no IDAT chunk");
  return idat;
}

// Checks and removes the 2-byte zlib header, as stb checks it: deflate, valid check bits, no
// preset dictionary. A header split across IDAT chunks is legal but never written in practice;
// stb takes those.
Status StripZlibHeader(std::vector<std::string_view>& idat) {
  if (idat[0].size() < 2) return Unsupported("zlib header split across IDAT chunks");
  const uint8_t cmf = static_cast<uint8_t>(idat[0][0]), flg = static_cast<uint8_t>(idat[0][1]);
  if ((cmf & 15) != 8 || (cmf * 256 + flg) % 31 != 0 || (flg & 32) != 0) {
    return Corrupt("bad zlib header");
  }
  idat[0].remove_prefix(2);
  return Status::Ok();
}

// RGB8 -> RGBA8 with alpha 255.
inline void ExpandRgbToRgba(const uint8_t* s, uint8_t* d, uint32_t width) {
  for (uint32_t x = 0; x < width; ++x, s += 3, d += 4) {
    d[0] = s[0];
    d[1] = s[1];
    d[2] = s[2];
    d[3] = 255;
  }
}

// Reads, unfilters and hands each row to `sink` as RGBA, top to bottom. Allocates only two rows
// (and an RGBA row for RGB images). `layout` is taken by value so that its fields can stay in
// registers across the calls to `sink`.
Status UnfilterRows(PngLayout layout, RowSource& source, const PngRowSink& sink) {
  const size_t stride = layout.stride();
  std::vector<uint8_t> rows(2 * (stride + 1), 0);
  std::vector<uint8_t> rgba(layout.channels == 4 ? 0 : static_cast<size_t>(layout.width) * 4);
  uint8_t* cur = rows.data();
  uint8_t* prev = rows.data() + stride + 1;  // row "-1" is zeros
  for (uint32_t y = 0; y < layout.height; ++y) {
    RETURN_IF_ERROR(source.Read(cur, stride + 1));
    const bool ok = layout.channels == 4 ? Unfilter<4>(cur[0], cur + 1, prev + 1, stride)
                                         : Unfilter<3>(cur[0], cur + 1, prev + 1, stride);
    if (!ok) return Corrupt("invalid row filter " + std::to_string(cur[0]));
    if (layout.channels == 4) {
      sink(cur + 1);
    } else {
      ExpandRgbToRgba(cur + 1, rgba.data(), layout.width);
      sink(rgba.data());
    }
    std::swap(cur, prev);
  }
  return Status::Ok();
}

}  // namespace

Status DecodePngRows(std::string_view bytes, const ImageInfo& info, const PngRowSink& sink,
                     PngInflate inflate) {
  ASSIGN_OR_RETURN(const PngLayout layout, ReadLayout(bytes, info));
  ASSIGN_OR_RETURN(std::vector<std::string_view> idat, ImageDataChunks(bytes));
  RETURN_IF_ERROR(StripZlibHeader(idat));
  // Allocation happens only from here, after IHDR is validated; the caller has already checked
  // width*height against DecodeLimits through ReadImageInfo.
  ASSIGN_OR_RETURN(std::unique_ptr<RowSource> source,
                   OpenRows(std::move(idat), layout.filtered_bytes(), inflate));
  RETURN_IF_ERROR(UnfilterRows(layout, *source, sink));
  return source->Finish();
}

}  // namespace imgmcp::imaging::internal
