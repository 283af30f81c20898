#include "local_backend/edit_ops.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "local_backend/bitmap_font.h"

namespace imgmcp::local {
namespace {

uint8_t Clamp8(int v) { return static_cast<uint8_t>(std::clamp(v, 0, 255)); }

// Rounds num/den to nearest, halves away from zero (den > 0).
int RoundDiv(int64_t num, int64_t den) {
  return static_cast<int>(num >= 0 ? (num + den / 2) / den : -((-num + den / 2) / den));
}

template <typename F>
void ForEachRgb(imaging::Image& img, F f) {
  for (size_t i = 0; i < img.rgba.size(); i += 4) {
    for (int c = 0; c < 3; ++c) img.rgba[i + c] = f(img.rgba[i + c], c);
  }
}

imaging::Image Blank(int w, int h) {
  imaging::Image out;
  out.width = w;
  out.height = h;
  out.rgba.resize(static_cast<size_t>(w) * h * 4);
  return out;
}

void CopyPixel(const uint8_t* src, uint8_t* dst) { std::copy(src, src + 4, dst); }

Status Rotate(imaging::Image& img, int degrees) {
  if (degrees == 0) return Status::Ok();  // "rotate 360": the image as it is
  const int w = img.width, h = img.height;
  imaging::Image out = degrees == 180 ? Blank(w, h) : Blank(h, w);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      int nx, ny;
      if (degrees == 90) {  // clockwise: (x, y) -> (h-1-y, x)
        nx = h - 1 - y;
        ny = x;
      } else if (degrees == 270) {  // counterclockwise: (x, y) -> (y, w-1-x)
        nx = y;
        ny = w - 1 - x;
      } else {
        nx = w - 1 - x;
        ny = h - 1 - y;
      }
      CopyPixel(img.Pixel(x, y), out.Pixel(nx, ny));
    }
  }
  img = std::move(out);
  return Status::Ok();
}

void Flip(imaging::Image& img, bool horizontal) {
  const int w = img.width, h = img.height;
  if (horizontal) {
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w / 2; ++x)
        std::swap_ranges(img.Pixel(x, y), img.Pixel(x, y) + 4, img.Pixel(w - 1 - x, y));
    }
  } else {
    for (int y = 0; y < h / 2; ++y) {
      std::swap_ranges(img.Pixel(0, y), img.Pixel(0, y) + static_cast<size_t>(w) * 4,
                       img.Pixel(0, h - 1 - y));
    }
  }
}

// One box-blur pass along rows (dx = 4 bytes) or columns, edges clamped, rounded.
void BoxPass(const imaging::Image& src, imaging::Image& dst, int radius, bool horizontal) {
  const int w = src.width, h = src.height;
  const int n = horizontal ? w : h, lines = horizontal ? h : w;
  const int window = 2 * radius + 1;
  for (int line = 0; line < lines; ++line) {
    auto at = [&](int i) {
      i = std::clamp(i, 0, n - 1);
      return horizontal ? src.Pixel(i, line) : src.Pixel(line, i);
    };
    int sum[4] = {0, 0, 0, 0};
    for (int i = -radius; i <= radius; ++i) {
      const uint8_t* p = at(i);
      for (int c = 0; c < 4; ++c) sum[c] += p[c];
    }
    for (int i = 0; i < n; ++i) {
      uint8_t* d = horizontal ? dst.Pixel(i, line) : dst.Pixel(line, i);
      for (int c = 0; c < 4; ++c) d[c] = static_cast<uint8_t>((sum[c] + window / 2) / window);
      const uint8_t* add = at(i + radius + 1);
      const uint8_t* sub = at(i - radius);
      for (int c = 0; c < 4; ++c) sum[c] += add[c] - sub[c];
    }
  }
}

void Blur(imaging::Image& img, int radius) {
  imaging::Image tmp = Blank(img.width, img.height);
  BoxPass(img, tmp, radius, true);
  BoxPass(tmp, img, radius, false);
}

// 3x3 kernel [0 -1 0; -1 5 -1; 0 -1 0] with clamped edges; alpha unchanged.
void Sharpen(imaging::Image& img) {
  const imaging::Image src = img;
  const int w = img.width, h = img.height;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const uint8_t* c = src.Pixel(x, y);
      const uint8_t* l = src.Pixel(std::max(x - 1, 0), y);
      const uint8_t* r = src.Pixel(std::min(x + 1, w - 1), y);
      const uint8_t* u = src.Pixel(x, std::max(y - 1, 0));
      const uint8_t* d = src.Pixel(x, std::min(y + 1, h - 1));
      uint8_t* o = img.Pixel(x, y);
      for (int k = 0; k < 3; ++k) o[k] = Clamp8(5 * c[k] - l[k] - r[k] - u[k] - d[k]);
    }
  }
}

void Fill(imaging::Image& img, int x0, int y0, int x1, int y1,
          Rgb c) {  // [x0,x1) x [y0,y1), clipped
  x0 = std::max(x0, 0);
  y0 = std::max(y0, 0);
  x1 = std::min(x1, img.width);
  y1 = std::min(y1, img.height);
  for (int y = y0; y < y1; ++y) {
    for (int x = x0; x < x1; ++x) {
      uint8_t* p = img.Pixel(x, y);
      p[0] = c.r;
      p[1] = c.g;
      p[2] = c.b;
      p[3] = 255;
    }
  }
}

// A disc inscribed in the box [x, x+s) x [y, y+s): pixel centres within s/2 of the box centre.
void Disc(imaging::Image& img, int x, int y, int s, Rgb c) {
  const int x0 = std::max(x, 0), y0 = std::max(y, 0);
  const int x1 = static_cast<int>(std::min<int64_t>(static_cast<int64_t>(x) + s, img.width));
  const int y1 = static_cast<int>(std::min<int64_t>(static_cast<int64_t>(y) + s, img.height));
  const int64_t s2 = static_cast<int64_t>(s) * s;
  for (int py = y0; py < y1; ++py) {
    const int64_t dy = 2LL * (py - y) + 1 - s;  // doubled offset from the centre
    for (int px = x0; px < x1; ++px) {
      const int64_t dx = 2LL * (px - x) + 1 - s;
      if (dx * dx + dy * dy > s2) continue;
      uint8_t* p = img.Pixel(px, py);
      p[0] = c.r;
      p[1] = c.g;
      p[2] = c.b;
      p[3] = 255;
    }
  }
}

Status Crop(imaging::Image& img, const CropOp& op) {
  if (op.x < 0 || op.y < 0 || static_cast<int64_t>(op.x) + op.width > img.width ||
      static_cast<int64_t>(op.y) + op.height > img.height) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "crop " + std::to_string(op.x) + "," + std::to_string(op.y) + "," +
                         std::to_string(op.width) + "," + std::to_string(op.height) +
                         " is outside the " + std::to_string(img.width) + "x" +
                         std::to_string(img.height) +
                         " image (need X,Y >= 0, X+W <= width, Y+H <= height)");
  }
  imaging::Image out = Blank(op.width, op.height);
  for (int y = 0; y < op.height; ++y) {
    std::copy(img.Pixel(op.x, op.y + y),
              img.Pixel(op.x, op.y + y) + static_cast<size_t>(op.width) * 4, out.Pixel(0, y));
  }
  img = std::move(out);
  return Status::Ok();
}

Status ResizeTo(imaging::Image& img, const ResizeOp& op, const imaging::DecodeLimits& limits) {
  int64_t w = op.width, h = op.height;
  if (op.percent > 0) {
    w = std::max<int64_t>(1, (static_cast<int64_t>(img.width) * op.percent + 50) / 100);
    h = std::max<int64_t>(1, (static_cast<int64_t>(img.height) * op.percent + 50) / 100);
  }
  if (w * h > limits.max_pixels) {
    return MakeError(ErrorCode::kTooLarge, "resize to " + std::to_string(w) + "x" +
                                               std::to_string(h) + " = " + std::to_string(w * h) +
                                               " pixels is over the limit of " +
                                               std::to_string(limits.max_pixels));
  }
  if (w == img.width && h == img.height) return Status::Ok();
  ASSIGN_OR_RETURN(img, imaging::Resize(img, static_cast<int>(w), static_cast<int>(h)));
  return Status::Ok();
}

// Applies one operation to `img`: std::visit picks the overload for the operation's type.
struct OpApplier {
  imaging::Image& img;
  const imaging::DecodeLimits& limits;

  Status operator()(const GrayscaleOp&) {
    for (size_t i = 0; i < img.rgba.size(); i += 4) {
      // Rec. 601 luma in 8.8 fixed point (77 + 150 + 29 = 256).
      const uint8_t y = static_cast<uint8_t>(
          (77 * img.rgba[i] + 150 * img.rgba[i + 1] + 29 * img.rgba[i + 2] + 128) >> 8);
      img.rgba[i] = img.rgba[i + 1] = img.rgba[i + 2] = y;
    }
    return Status::Ok();
  }
  Status operator()(const InvertOp&) {
    ForEachRgb(img, [](uint8_t v, int) { return static_cast<uint8_t>(255 - v); });
    return Status::Ok();
  }
  Status operator()(const RotateOp& o) { return Rotate(img, o.degrees); }
  Status operator()(const FlipOp& o) {
    Flip(img, o.horizontal);
    return Status::Ok();
  }
  Status operator()(const BlurOp& o) {
    Blur(img, o.radius);
    return Status::Ok();
  }
  Status operator()(const SharpenOp&) {
    Sharpen(img);
    return Status::Ok();
  }
  Status operator()(const BrightnessOp& o) {
    const int f = 100 + o.percent;
    ForEachRgb(img, [f](uint8_t v, int) { return Clamp8(RoundDiv(v * f, 100)); });
    return Status::Ok();
  }
  Status operator()(const ContrastOp& o) {
    const int f = 100 + o.percent;
    ForEachRgb(img, [f](uint8_t v, int) { return Clamp8(RoundDiv((v - 128) * f, 100) + 128); });
    return Status::Ok();
  }
  Status operator()(const TintOp& o) {
    const int s = o.strength;
    const uint8_t c[3] = {o.color.r, o.color.g, o.color.b};
    ForEachRgb(img, [&](uint8_t v, int k) {
      return static_cast<uint8_t>(RoundDiv(v * (100 - s) + c[k] * s, 100));
    });
    return Status::Ok();
  }
  Status operator()(const BorderOp& o) {
    const int w = img.width, h = img.height, b = std::min({o.width, w, h});
    Fill(img, 0, 0, w, b, o.color);
    Fill(img, 0, h - b, w, h, o.color);
    Fill(img, 0, 0, b, h, o.color);
    Fill(img, w - b, 0, w, h, o.color);
    return Status::Ok();
  }
  Status operator()(const CropOp& o) { return Crop(img, o); }
  Status operator()(const ResizeOp& o) { return ResizeTo(img, o, limits); }
  Status operator()(const DrawOp& o) {
    if (o.shape == DrawShape::kSquare) {
      Fill(img, o.x, o.y,
           static_cast<int>(std::min<int64_t>(static_cast<int64_t>(o.x) + o.size, INT32_MAX)),
           static_cast<int>(std::min<int64_t>(static_cast<int64_t>(o.y) + o.size, INT32_MAX)),
           o.color);
    } else {
      Disc(img, o.x, o.y, o.size, o.color);
    }
    return Status::Ok();
  }
  Status operator()(const TextOp& o) {
    DrawText(img, o.text, o.x, o.y, o.scale, o.color);
    return Status::Ok();
  }
};

}  // namespace

Status ApplyEdit(imaging::Image& img, const EditOp& op, const imaging::DecodeLimits& limits) {
  return std::visit(OpApplier{img, limits}, op);
}

}  // namespace imgmcp::local
