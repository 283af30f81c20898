// PNG encoder over zlib: adaptive per-row filters, streamed into one IDAT chunk with no full-size
// intermediate copy. Deterministic for a given zlib build.
#include <zlib.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "imaging/codec_internal.h"

namespace imgmcp::imaging::internal {
namespace {

void PutBe32(std::string& s, size_t at, uint32_t v) {
  s[at] = static_cast<char>(v >> 24);
  s[at + 1] = static_cast<char>(v >> 16);
  s[at + 2] = static_cast<char>(v >> 8);
  s[at + 3] = static_cast<char>(v);
}

// Completes the chunk whose type and `len` bytes of data are already in `out` from `at` + 4 on:
// writes its length at `at`, drops anything after its data and appends its CRC.
void SealChunk(std::string& out, size_t at, uint32_t len) {
  out.resize(at + 8 + len);
  PutBe32(out, at, len);
  const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(&out[at + 4]), len + 4);
  out.resize(out.size() + 4);
  PutBe32(out, out.size() - 4, static_cast<uint32_t>(crc));
}

void AppendChunk(std::string& out, const char* type, const uint8_t* data, uint32_t len) {
  const size_t at = out.size();
  out.resize(at + 8);
  std::memcpy(&out[at + 4], type, 4);
  if (len > 0) out.append(reinterpret_cast<const char*>(data), len);
  SealChunk(out, at, len);
}

// Branch-free Paeth predictor, so the filter loops vectorise.
inline uint8_t Paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  const int bc = pb <= pc ? b : c;
  return static_cast<uint8_t>(pa <= pb && pa <= pc ? a : bc);
}

uint64_t Cost(const uint8_t* c, size_t n) {
  uint64_t cost = 0;
  for (size_t i = 0; i < n; ++i) cost += c[i] < 128 ? c[i] : 256 - c[i];
  return cost;
}

// Filters one row with each of the five PNG filters and keeps the one with the smallest sum of
// absolute (signed) values, the heuristic libpng uses. `prev` is null for the first row.
void FilterRow(const uint8_t* row, const uint8_t* prev, size_t n, int bpp,
               std::array<std::vector<uint8_t>, 5>& candidates, uint8_t* out) {
  const size_t k = static_cast<size_t>(bpp);
  uint8_t* none = candidates[0].data();
  uint8_t* sub = candidates[1].data();
  uint8_t* up = candidates[2].data();
  uint8_t* avg = candidates[3].data();
  uint8_t* paeth = candidates[4].data();
  std::memcpy(none, row, n);
  for (size_t i = 0; i < k; ++i) sub[i] = row[i];
  for (size_t i = k; i < n; ++i) sub[i] = static_cast<uint8_t>(row[i] - row[i - k]);
  int count = 2;
  if (prev != nullptr) {
    count = 5;
    for (size_t i = 0; i < n; ++i) up[i] = static_cast<uint8_t>(row[i] - prev[i]);
    for (size_t i = 0; i < k; ++i) {
      avg[i] = static_cast<uint8_t>(row[i] - (prev[i] >> 1));
      paeth[i] = static_cast<uint8_t>(row[i] - prev[i]);
    }
    for (size_t i = k; i < n; ++i) {
      avg[i] = static_cast<uint8_t>(row[i] - ((row[i - k] + prev[i]) >> 1));
      paeth[i] = static_cast<uint8_t>(row[i] - Paeth(row[i - k], prev[i], prev[i - k]));
    }
  }
  uint64_t best_cost = UINT64_MAX;
  int best = 0;
  for (int f = 0; f < count; ++f) {
    uint64_t cost = Cost(candidates[f].data(), n);
    if (cost < best_cost) {
      best_cost = cost;
      best = f;
    }
  }
  out[0] = static_cast<uint8_t>(best);
  std::memcpy(out + 1, candidates[best].data(), n);
}

bool AllOpaque(const uint8_t* rgba, size_t pixels) {
  for (size_t i = 0; i < pixels; ++i) {
    if (rgba[i * 4 + 3] != 255) return false;
  }
  return true;
}

void AppendIhdr(std::string& out, int width, int height, int bpp) {
  uint8_t ihdr[13] = {};
  for (int i = 0; i < 4; ++i) {
    ihdr[i] = static_cast<uint8_t>(static_cast<uint32_t>(width) >> (24 - 8 * i));
    ihdr[4 + i] = static_cast<uint8_t>(static_cast<uint32_t>(height) >> (24 - 8 * i));
  }
  ihdr[8] = 8;                 // bit depth
  ihdr[9] = bpp == 3 ? 2 : 6;  // RGB or RGBA
  AppendChunk(out, "IHDR", ihdr, sizeof(ihdr));
}

// One row of `width` RGBA pixels as PNG samples: RGB when `bpp` is 3, else RGBA as it is.
inline void PackRow(const uint8_t* src, int width, int bpp, uint8_t* out) {
  if (bpp == 3) {
    for (int x = 0; x < width; ++x) {
      out[x * 3] = src[x * 4];
      out[x * 3 + 1] = src[x * 4 + 1];
      out[x * 3 + 2] = src[x * 4 + 2];
    }
  } else {
    std::memcpy(out, src, static_cast<size_t>(width) * 4);
  }
}

// Packs, filters and feeds the rows to `zs` in batches, finishing the stream with the last
// batch. Returns Z_OK, or zlib's error.
int DeflateRows(z_stream& zs, const uint8_t* rgba, int width, int height, int bpp) {
  constexpr int kBatchRows = 16;
  const size_t row_bytes = static_cast<size_t>(width) * bpp;
  std::vector<uint8_t> cur(row_bytes), prev(row_bytes);
  std::array<std::vector<uint8_t>, 5> candidates;
  for (auto& c : candidates) c.resize(row_bytes);
  std::vector<uint8_t> batch((row_bytes + 1) * kBatchRows);
  int rows_in_batch = 0;
  int zret = Z_OK;
  for (int y = 0; y < height && zret == Z_OK; ++y) {
    PackRow(rgba + static_cast<size_t>(y) * width * 4, width, bpp, cur.data());
    FilterRow(cur.data(), y > 0 ? prev.data() : nullptr, row_bytes, bpp, candidates,
              batch.data() + rows_in_batch * (row_bytes + 1));
    std::swap(cur, prev);
    ++rows_in_batch;
    const bool last = y == height - 1;
    if (rows_in_batch == kBatchRows || last) {
      zs.next_in = batch.data();
      zs.avail_in = static_cast<uInt>(rows_in_batch * (row_bytes + 1));
      zret = deflate(&zs, last ? Z_FINISH : Z_NO_FLUSH);
      if (zret == Z_STREAM_END) zret = Z_OK;
      rows_in_batch = 0;
    }
  }
  return zret;
}

// The image data as one IDAT chunk, deflated straight into `out`: room for zlib's worst case is
// reserved, then cut to what it wrote.
Status AppendIdat(std::string& out, const uint8_t* rgba, int width, int height, int bpp,
                  int level) {
  const uint64_t raw_size = (static_cast<uint64_t>(width) * bpp + 1) * height;
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return MakeError(ErrorCode::kInternal, "zlib deflateInit failed");
  }
  const uLong bound = deflateBound(&zs, static_cast<uLong>(raw_size));
  if (bound > 0x7fffffffUL) {
    deflateEnd(&zs);
    return MakeError(ErrorCode::kTooLarge, "image too large for one PNG chunk");
  }
  const size_t idat_at = out.size();
  out.resize(idat_at + 8 + bound);
  std::memcpy(&out[idat_at + 4], "IDAT", 4);
  zs.next_out = reinterpret_cast<Bytef*>(&out[idat_at + 8]);
  zs.avail_out = static_cast<uInt>(bound);
  const int zret = DeflateRows(zs, rgba, width, height, bpp);
  const uLong compressed = zs.total_out;
  deflateEnd(&zs);
  if (zret != Z_OK) return MakeError(ErrorCode::kInternal, "zlib deflate failed");
  SealChunk(out, idat_at, static_cast<uint32_t>(compressed));
  return Status::Ok();
}

}  // namespace

Result<std::string> EncodePngPixels(const uint8_t* rgba, int width, int height, int level) {
  if (level < 0 || level > 9) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "PNG compression level must be 0-9, got " + std::to_string(level));
  }
  const int bpp = AllOpaque(rgba, static_cast<size_t>(width) * height) ? 3 : 4;
  std::string out("\x89PNG\r\n\x1a\n", 8);
  AppendIhdr(out, width, height, bpp);
  RETURN_IF_ERROR(AppendIdat(out, rgba, width, height, bpp, level));
  AppendChunk(out, "IEND", nullptr, 0);
  return out;
}

}  // namespace imgmcp::imaging::internal
