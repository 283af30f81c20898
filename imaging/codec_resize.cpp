// Resampling. Downscaling uses an exact area-average (box) filter in fixed point — fast and the
// right anti-aliasing filter for decimation; upscaling uses stb_image_resize
// (Mitchell/Catmull-Rom).
#include <stb_image_resize.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "imaging/codec_internal.h"

namespace imgmcp::imaging::internal {
namespace {

// For each output index, the source span it covers and each source pixel's weight in 1/2^16ths.
struct Span {
  int first = 0;
  std::vector<uint32_t> weights;  // sum == 65536
};

std::vector<Span> AreaSpans(int in, int out) {
  std::vector<Span> spans(out);
  // Output pixel o covers source interval [o*in/out, (o+1)*in/out); in units of 1/out pixel:
  // [o*in, (o+1)*in).
  for (int o = 0; o < out; ++o) {
    const int64_t lo = static_cast<int64_t>(o) * in, hi = static_cast<int64_t>(o + 1) * in;
    Span& s = spans[o];
    s.first = static_cast<int>(lo / out);
    const int last = static_cast<int>((hi - 1) / out);
    uint32_t total = 0;
    for (int i = s.first; i <= last; ++i) {
      const int64_t a = std::max<int64_t>(lo, static_cast<int64_t>(i) * out);
      const int64_t b = std::min<int64_t>(hi, static_cast<int64_t>(i + 1) * out);
      const uint32_t w = static_cast<uint32_t>(((b - a) << 16) / in);
      s.weights.push_back(w);
      total += w;
    }
    s.weights.back() += 65536 - total;  // rounding remainder, so flat areas stay exact
  }
  return spans;
}

void AreaDownscale(const uint8_t* in, int w, int h, uint8_t* out, int ow, int oh) {
  const std::vector<Span> xs = AreaSpans(w, ow), ys = AreaSpans(h, oh);
  // Horizontal pass per needed source row into 32-bit accumulators (value << 16 scale), then
  // the vertical pass accumulates weighted rows.
  std::vector<uint32_t> hrow(static_cast<size_t>(ow) * 4);
  std::vector<uint64_t> acc(static_cast<size_t>(ow) * 4);
  for (int oy = 0; oy < oh; ++oy) {
    std::fill(acc.begin(), acc.end(), 0);
    const Span& sy = ys[oy];
    for (size_t k = 0; k < sy.weights.size(); ++k) {
      const uint8_t* row = in + static_cast<size_t>(sy.first + k) * w * 4;
      for (int ox = 0; ox < ow; ++ox) {
        const Span& sx = xs[ox];
        const uint8_t* p = row + static_cast<size_t>(sx.first) * 4;
        uint32_t r = 0, g = 0, b = 0, a = 0;
        for (uint32_t wt : sx.weights) {
          r += p[0] * wt;
          g += p[1] * wt;
          b += p[2] * wt;
          a += p[3] * wt;
          p += 4;
        }
        hrow[ox * 4] = r;
        hrow[ox * 4 + 1] = g;
        hrow[ox * 4 + 2] = b;
        hrow[ox * 4 + 3] = a;
      }
      const uint64_t wy = sy.weights[k];
      for (size_t i = 0; i < acc.size(); ++i) acc[i] += hrow[i] * wy;
    }
    uint8_t* dst = out + static_cast<size_t>(oy) * ow * 4;
    for (size_t i = 0; i < acc.size(); ++i) {
      dst[i] = static_cast<uint8_t>((acc[i] + (1ULL << 31)) >> 32);
    }
  }
}

}  // namespace

Status ResizePixels(const uint8_t* in, int w, int h, uint8_t* out, int ow, int oh) {
  if (ow <= w && oh <= h) {
    AreaDownscale(in, w, h, out, ow, oh);
    return Status::Ok();
  }
  if (!stbir_resize_uint8(in, w, h, 0, out, ow, oh, 0, 4)) {
    return MakeError(ErrorCode::kInternal, "stb_image_resize failed");
  }
  return Status::Ok();
}

}  // namespace imgmcp::imaging::internal
