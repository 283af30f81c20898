#include "test_images.h"

#include <zlib.h>

#include <algorithm>
#include <vector>

namespace imgmcp::imaging::testing {
namespace {

void Be32(std::string& s, uint32_t v) {
  for (int i = 3; i >= 0; --i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}

void Chunk(std::string& out, const std::string& type, const std::string& data) {
  Be32(out, static_cast<uint32_t>(data.size()));
  std::string body = type + data;
  out += body;
  Be32(out,
       static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()), body.size())));
}

}  // namespace

Image Solid(int w, int h, local::Rgb c, uint8_t alpha) {
  Image img;
  img.width = w;
  img.height = h;
  img.rgba.resize(static_cast<size_t>(w) * h * 4);
  for (size_t i = 0; i < img.rgba.size(); i += 4) {
    img.rgba[i] = c.r;
    img.rgba[i + 1] = c.g;
    img.rgba[i + 2] = c.b;
    img.rgba[i + 3] = alpha;
  }
  return img;
}

Image Photo(int w, int h, uint32_t seed) {
  Image img = Solid(w, h, local::Rgb{});
  uint32_t state = seed * 2654435761u + 1;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      state = state * 1664525u + 1013904223u;
      const int noise = static_cast<int>((state >> 24) % 24) - 12;
      uint8_t* p = img.Pixel(x, y);
      const int r = x * 255 / w + noise, g = y * 255 / h + noise,
                b = ((x + y) * 255 / (w + h) + (x * y) % 97) / 2 + noise;
      p[0] = static_cast<uint8_t>(std::clamp(r, 0, 255));
      p[1] = static_cast<uint8_t>(std::clamp(g, 0, 255));
      p[2] = static_cast<uint8_t>(std::clamp(b, 0, 255));
      p[3] = 255;
    }
  }
  return img;
}

std::string CraftPng(uint32_t width, uint32_t height, uint64_t raw_zeros, uint8_t color_type) {
  std::string png("\x89PNG\r\n\x1a\n", 8);
  std::string ihdr;
  Be32(ihdr, width);
  Be32(ihdr, height);
  ihdr += static_cast<char>(8);
  ihdr += static_cast<char>(color_type);
  ihdr += std::string(3, '\0');
  Chunk(png, "IHDR", ihdr);
  std::vector<Bytef> zeros(raw_zeros, 0);
  uLongf len = compressBound(zeros.size());
  std::string idat(len, '\0');
  compress2(reinterpret_cast<Bytef*>(idat.data()), &len, zeros.data(), zeros.size(), 9);
  idat.resize(len);
  Chunk(png, "IDAT", idat);
  Chunk(png, "IEND", "");
  return png;
}

std::string PngOf(const Image& img) { return EncodePng(img).value(); }
std::string JpegOf(const Image& img, int quality) { return EncodeJpeg(img, quality).value(); }

local::Rgb At(const Image& img, int x, int y) {
  const uint8_t* p = img.Pixel(x, y);
  return local::Rgb{p[0], p[1], p[2]};
}

}  // namespace imgmcp::imaging::testing
