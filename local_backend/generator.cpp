#include "local_backend/generator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "common/ascii.h"

namespace imgmcp::local {
namespace {

// SplitMix64: a tiny deterministic PRNG seeded by the prompt hash.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int Uniform(int lo, int hi) {  // inclusive
    return lo + static_cast<int>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }

 private:
  uint64_t state_;
};

uint8_t Clamp8(double v) {
  if (v <= 0) return 0;
  if (v >= 255) return 255;
  // v > 0 here, where adding 0.5 and truncating rounds half up (the images are made this way).
  // NOLINTNEXTLINE(bugprone-incorrect-roundings)
  return static_cast<uint8_t>(v + 0.5);
}

Rgb Mix(Rgb a, Rgb b, double t) {
  return Rgb{Clamp8(a.r + (b.r - a.r) * t), Clamp8(a.g + (b.g - a.g) * t),
             Clamp8(a.b + (b.b - a.b) * t)};
}

// HSV (h in degrees, s and v in [0,1]) to RGB with plain arithmetic (no libm), so it is exact.
Rgb FromHsv(int h, double s, double v) {
  h = ((h % 360) + 360) % 360;
  const int sector = h / 60;
  const double f = (h % 60) / 60.0;
  const double p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
  double r = 0, g = 0, b = 0;
  switch (sector) {
    case 0:
      r = v;
      g = t;
      b = p;
      break;
    case 1:
      r = q;
      g = v;
      b = p;
      break;
    case 2:
      r = p;
      g = v;
      b = t;
      break;
    case 3:
      r = p;
      g = q;
      b = v;
      break;
    case 4:
      r = t;
      g = p;
      b = v;
      break;
    default:
      r = v;
      g = p;
      b = q;
      break;
  }
  return Rgb{Clamp8(r * 255), Clamp8(g * 255), Clamp8(b * 255)};
}

// At least three colours: the named ones first, completed with variants or a seeded harmony.
std::vector<Rgb> BuildPalette(std::vector<Rgb> colors, Rng& rng) {
  if (colors.empty()) {
    const int hue = rng.Uniform(0, 359);
    const int spread = rng.Uniform(25, 60);
    colors.push_back(FromHsv(hue, 0.55 + rng.Uniform(0, 20) / 100.0, 0.85));
    colors.push_back(FromHsv(hue + spread, 0.60, 0.55 + rng.Uniform(0, 20) / 100.0));
    colors.push_back(FromHsv(hue + 180, 0.45, 0.95));
  }
  const Rgb white{255, 255, 255}, black{0, 0, 0};
  if (colors.size() == 1) {
    colors.push_back(Mix(colors[0], black, 0.55));
    colors.push_back(Mix(colors[0], white, 0.6));
  } else if (colors.size() == 2) {
    colors.push_back(Mix(Mix(colors[0], colors[1], 0.5), white, 0.5));
  }
  return colors;
}

enum class Shape { kCircle, kRing, kRect, kStripe };

Shape PickShape(const std::string& lower_prompt, Rng& rng) {
  // Shape words in the prompt bias the draw; otherwise an even mix.
  int w_circle = 3, w_ring = 2, w_rect = 2, w_stripe = 1;
  auto has = [&](std::string_view word) { return lower_prompt.find(word) != std::string::npos; };
  if (has("circle") || has("sun") || has("moon") || has("ball") || has("bubble")) w_circle += 6;
  if (has("ring")) w_ring += 6;
  if (has("square") || has("box") || has("rect") || has("block") || has("building")) w_rect += 6;
  if (has("stripe") || has("line") || has("wave")) w_stripe += 6;
  int pick = rng.Uniform(0, w_circle + w_ring + w_rect + w_stripe - 1);
  if ((pick -= w_circle) < 0) return Shape::kCircle;
  if ((pick -= w_ring) < 0) return Shape::kRing;
  if ((pick -= w_rect) < 0) return Shape::kRect;
  return Shape::kStripe;
}

inline void Blend(uint8_t* p, Rgb c, int alpha) {
  if (alpha <= 0) return;
  const int inv = 255 - alpha;
  p[0] = static_cast<uint8_t>((p[0] * inv + c.r * alpha + 127) / 255);
  p[1] = static_cast<uint8_t>((p[1] * inv + c.g * alpha + 127) / 255);
  p[2] = static_cast<uint8_t>((p[2] * inv + c.b * alpha + 127) / 255);
}

double Coverage(double v) { return v <= 0 ? 0 : (v >= 1 ? 1 : v); }

void PaintBackground(imaging::Image& img, const std::vector<Rgb>& pal, Rng& rng) {
  static constexpr int kDirs[][2] = {{1, 0}, {0, 1}, {1, 1},  {1, -1},
                                     {2, 1}, {1, 2}, {-1, 2}, {2, -1}};
  const auto& d = kDirs[rng.Uniform(0, 7)];
  const int w = img.width, h = img.height;
  // Projection range over the four corners.
  double lo = 0, hi = 0;
  for (int cx : {0, w - 1}) {
    for (int cy : {0, h - 1}) {
      const double v = static_cast<double>(cx) * d[0] + static_cast<double>(cy) * d[1];
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  const double range = hi > lo ? hi - lo : 1;
  // A soft glow of the third colour around a seeded centre.
  const double gx = w * rng.Uniform(15, 85) / 100.0, gy = h * rng.Uniform(15, 85) / 100.0;
  const double gr = std::max(w, h) * rng.Uniform(45, 80) / 100.0;
  const double inv_gr2 = 1.0 / (gr * gr);
  const Rgb a = pal[0], b = pal[1], g = pal[2];
  for (int y = 0; y < h; ++y) {
    uint8_t* row = img.Pixel(0, y);
    const double dy2 = (y - gy) * (y - gy);
    for (int x = 0; x < w; ++x) {
      const double t = (static_cast<double>(x) * d[0] + static_cast<double>(y) * d[1] - lo) / range;
      double r = a.r + (b.r - a.r) * t, gg = a.g + (b.g - a.g) * t, bb = a.b + (b.b - a.b) * t;
      const double q = 1.0 - ((x - gx) * (x - gx) + dy2) * inv_gr2;  // 1 at the centre
      if (q > 0) {
        const double k = 0.65 * q * q;
        r += (g.r - r) * k;
        gg += (g.g - gg) * k;
        bb += (g.b - bb) * k;
      }
      uint8_t* p = row + x * 4;
      p[0] = Clamp8(r);
      p[1] = Clamp8(gg);
      p[2] = Clamp8(bb);
      p[3] = 255;
    }
  }
}

void PaintShape(imaging::Image& img, Shape shape, Rgb color, int alpha, Rng& rng) {
  const int w = img.width, h = img.height, m = std::min(w, h);
  const int size = m * rng.Uniform(8, 35) / 100;
  const int cx = rng.Uniform(0, w - 1), cy = rng.Uniform(0, h - 1);
  switch (shape) {
    case Shape::kCircle:
    case Shape::kRing: {
      const double r = size / 2.0 + 1;
      const double thick = std::max(2.0, r * rng.Uniform(12, 30) / 100.0);
      const int x0 = std::max(0, static_cast<int>(cx - r - 1));
      const int x1 = std::min(w - 1, static_cast<int>(cx + r + 1));
      const int y0 = std::max(0, static_cast<int>(cy - r - 1));
      const int y1 = std::min(h - 1, static_cast<int>(cy + r + 1));
      for (int y = y0; y <= y1; ++y) {
        for (int x = x0; x <= x1; ++x) {
          const double dist =
              std::sqrt(static_cast<double>((x - cx) * (x - cx) + (y - cy) * (y - cy)));
          double cov = Coverage(r - dist + 0.5);
          if (shape == Shape::kRing) cov = std::min(cov, Coverage(dist - (r - thick) + 0.5));
          // alpha * cov >= 0: truncating after adding 0.5 rounds half up.
          // NOLINTNEXTLINE(bugprone-incorrect-roundings)
          const int a = static_cast<int>(alpha * cov + 0.5);
          Blend(img.Pixel(x, y), color, a);
        }
      }
      break;
    }
    case Shape::kRect: {
      const int rw = size, rh = size * rng.Uniform(50, 150) / 100 + 1;
      const int x0 = std::max(0, cx - rw / 2), x1 = std::min(w, cx + rw / 2 + 1);
      const int y0 = std::max(0, cy - rh / 2), y1 = std::min(h, cy + rh / 2 + 1);
      for (int y = y0; y < y1; ++y) {
        for (int x = x0; x < x1; ++x) Blend(img.Pixel(x, y), color, alpha);
      }
      break;
    }
    case Shape::kStripe: {
      // A band across the whole image along a seeded integer direction.
      static constexpr int kNormals[][2] = {{1, 1}, {1, -1}, {2, 1}, {1, 2}, {0, 1}, {1, 0}};
      const auto& n = kNormals[rng.Uniform(0, 5)];
      const double len = std::sqrt(static_cast<double>(n[0] * n[0] + n[1] * n[1]));
      const double c = (static_cast<double>(cx) * n[0] + static_cast<double>(cy) * n[1]) / len;
      const double half = std::max(3, size / 6) / 2.0;
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
          const double dist =
              std::abs((static_cast<double>(x) * n[0] + static_cast<double>(y) * n[1]) / len - c);
          if (dist > half + 1) continue;
          // Never negative: truncating after adding 0.5 rounds half up.
          // NOLINTNEXTLINE(bugprone-incorrect-roundings)
          const int a = static_cast<int>(alpha * Coverage(half - dist + 0.5) + 0.5);
          Blend(img.Pixel(x, y), color, a);
        }
      }
      break;
    }
  }
}

}  // namespace

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : bytes) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

Result<imaging::ImageSize> SizeForAspectRatio(std::string_view aspect_ratio) {
  return imaging::PixelSize("1K", aspect_ratio);
}

std::string AllowedAspectRatios() { return imaging::JoinList(imaging::AspectRatioNames(), ", "); }

Result<GeneratedImage> GenerateImage(std::string_view prompt, int width, int height,
                                     const std::vector<Rgb>& extra_colors) {
  const std::string_view trimmed = TrimAsciiWhitespace(prompt);
  if (trimmed.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "prompt is empty; describe the image to make");
  }
  if (width <= 0 || height <= 0) {
    return MakeError(ErrorCode::kInvalidArgument, "image size must be positive");
  }
  GeneratedImage out;
  out.image.width = width;
  out.image.height = height;
  const std::string lower = AsciiLower(trimmed);

  if (lower.rfind("solid", 0) == 0 && (lower.size() == 5 || IsAsciiWhitespace(lower[5]))) {
    std::string_view rest = TrimAsciiWhitespace(trimmed.substr(5));
    const std::string_view word =
        rest.substr(0, std::min(rest.find_first_of(" \t\r\n,.;"), rest.size()));
    const std::optional<Rgb> c = ParseColor(word);
    if (!c) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "\"solid\" must be followed by a colour (a CSS colour name such as red or "
                       "cornflowerblue, or #rrggbb); got \"" +
                           std::string(word) + "\"");
    }
    out.image.rgba.resize(static_cast<size_t>(width) * height * 4);
    for (size_t i = 0; i < out.image.rgba.size(); i += 4) {
      out.image.rgba[i] = c->r;
      out.image.rgba[i + 1] = c->g;
      out.image.rgba[i + 2] = c->b;
      out.image.rgba[i + 3] = 255;
    }
    out.description = "a uniform " + ToHex(*c) + " image";
    return out;
  }

  const uint64_t seed = Fnv1a64(prompt);
  Rng rng(seed);
  std::vector<Rgb> named = FindColors(trimmed);
  named.insert(named.end(), extra_colors.begin(), extra_colors.end());
  const std::vector<Rgb> palette = BuildPalette(named, rng);

  out.image.rgba.resize(static_cast<size_t>(width) * height * 4);
  PaintBackground(out.image, palette, rng);
  const int shapes = rng.Uniform(4, 8);
  for (int i = 0; i < shapes; ++i) {
    const Shape shape = PickShape(lower, rng);
    Rgb color = palette[rng.Uniform(0, static_cast<int>(palette.size()) - 1)];
    if (rng.Uniform(0, 2) == 0) color = Mix(color, Rgb{255, 255, 255}, 0.35);
    PaintShape(out.image, shape, color, rng.Uniform(110, 220), rng);
  }

  char seed_hex[20];
  std::snprintf(seed_hex, sizeof(seed_hex), "%016llx", static_cast<unsigned long long>(seed));
  out.description =
      "an abstract composition (gradient, glow and " + std::to_string(shapes) + " shapes) in ";
  for (size_t i = 0; i < palette.size(); ++i) {
    out.description += (i ? ", " : "") + ToHex(palette[i]);
  }
  out.description += std::string("; seed ") + seed_hex;
  return out;
}

}  // namespace imgmcp::local
