// Resampling. Downscaling uses an exact area-average (box) filter in fixed point — fast and the
// right anti-aliasing filter for decimation; upscaling uses stb_image_resize
// (Mitchell/Catmull-Rom).
#include <stb_image_resize.h>

#include <algorithm>
#include <cstdint>
#include <memory>
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

// One source row's horizontal pass into 32-bit accumulators (value << 16 scale).
void HorizontalPass(const uint8_t* row, const std::vector<Span>& xs, uint32_t* hrow) {
  const int ow = static_cast<int>(xs.size());
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
}

}  // namespace

// When downscaling, a source row lies in at most two output rows' spans (the current one and the
// next), so two accumulators suffice. Integer sums: the order rows arrive in cannot change a pixel.
struct AreaDownscaler::State {
  int h = 0;
  int ow = 0;
  int oh = 0;
  uint8_t* out = nullptr;
  std::vector<Span> xs, ys;
  std::vector<uint32_t> hrow;
  std::vector<uint64_t> acc, next_acc;  // output rows `oy` and `oy + 1`
  int y = 0;                            // next source row
  int oy = 0;                           // first output row not yet written
};

AreaDownscaler::AreaDownscaler(int w, int h, uint8_t* out, int ow, int oh)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.h = h;
  s.ow = ow;
  s.oh = oh;
  s.out = out;
  s.xs = AreaSpans(w, ow);
  s.ys = AreaSpans(h, oh);
  s.hrow.resize(static_cast<size_t>(ow) * 4);
  s.acc.assign(s.hrow.size(), 0);
  s.next_acc.assign(s.hrow.size(), 0);
}

AreaDownscaler::~AreaDownscaler() = default;

void AreaDownscaler::AddRow(const uint8_t* rgba) {
  State& s = *state_;
  if (s.y >= s.h || s.oy >= s.oh) return;
  const int y = s.y++;
  HorizontalPass(rgba, s.xs, s.hrow.data());
  const Span& cur = s.ys[s.oy];
  const int cur_last = cur.first + static_cast<int>(cur.weights.size()) - 1;
  if (y >= cur.first && y <= cur_last) {
    const uint64_t wy = cur.weights[y - cur.first];
    for (size_t i = 0; i < s.acc.size(); ++i) s.acc[i] += s.hrow[i] * wy;
  }
  if (s.oy + 1 < s.oh) {
    const Span& nxt = s.ys[s.oy + 1];
    if (y >= nxt.first && static_cast<size_t>(y - nxt.first) < nxt.weights.size()) {
      const uint64_t wy = nxt.weights[y - nxt.first];
      for (size_t i = 0; i < s.next_acc.size(); ++i) s.next_acc[i] += s.hrow[i] * wy;
    }
  }
  if (y == cur_last) {
    uint8_t* dst = s.out + static_cast<size_t>(s.oy) * s.ow * 4;
    for (size_t i = 0; i < s.acc.size(); ++i) {
      dst[i] = static_cast<uint8_t>((s.acc[i] + (1ULL << 31)) >> 32);
    }
    s.acc.swap(s.next_acc);
    std::fill(s.next_acc.begin(), s.next_acc.end(), 0);
    ++s.oy;
  }
}

namespace {

void AreaDownscale(const uint8_t* in, int w, int h, uint8_t* out, int ow, int oh) {
  AreaDownscaler down(w, h, out, ow, oh);
  for (int y = 0; y < h; ++y) down.AddRow(in + static_cast<size_t>(y) * w * 4);
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
