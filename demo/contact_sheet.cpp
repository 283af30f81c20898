// imgmcp_contact_sheet OUT.png THUMB_EDGE COLUMNS IMAGE...
// Lays out thumbnails of the given images (in order) on a grid and writes one PNG. The demo uses
// it to show a session's whole version chain at a glance.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/log.h"
#include "imaging/codec.h"

namespace {

using imgmcp::imaging::Image;

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    imgmcp::log::Error("contact_sheet", "usage: imgmcp_contact_sheet OUT.png EDGE COLUMNS IMAGE...");
    return 2;
  }
  const std::string out_path = argv[1];
  const int edge = std::max(16, std::atoi(argv[2]));
  const int columns = std::max(1, std::atoi(argv[3]));
  const int count = argc - 4;
  const int rows = (count + columns - 1) / columns;
  const int gap = 8;
  Image sheet;
  sheet.width = columns * (edge + gap) + gap;
  sheet.height = rows * (edge + gap) + gap;
  sheet.rgba.assign(static_cast<size_t>(sheet.width) * sheet.height * 4, 0);
  for (size_t i = 0; i < sheet.rgba.size(); i += 4) {
    sheet.rgba[i] = sheet.rgba[i + 1] = sheet.rgba[i + 2] = 32;
    sheet.rgba[i + 3] = 255;
  }
  for (int n = 0; n < count; ++n) {
    std::string bytes;
    if (!ReadFile(argv[4 + n], &bytes)) {
      imgmcp::log::Error("contact_sheet", std::string("cannot read ") + argv[4 + n]);
      return 1;
    }
    auto decoded = imgmcp::imaging::Decode(bytes);
    if (!decoded.ok()) {
      imgmcp::log::Error("contact_sheet", std::string(argv[4 + n]) + ": " + decoded.error().message);
      return 1;
    }
    const double scale = static_cast<double>(edge) / std::max(decoded->width, decoded->height);
    const int w = std::max(1, static_cast<int>(decoded->width * scale));
    const int h = std::max(1, static_cast<int>(decoded->height * scale));
    auto thumb = imgmcp::imaging::Resize(*decoded, w, h);
    if (!thumb.ok()) return 1;
    const int ox = gap + (n % columns) * (edge + gap) + (edge - w) / 2;
    const int oy = gap + (n / columns) * (edge + gap) + (edge - h) / 2;
    for (int y = 0; y < h; ++y) {
      std::copy_n(thumb->Pixel(0, y), static_cast<size_t>(w) * 4, sheet.Pixel(ox, oy + y));
    }
  }
  auto png = imgmcp::imaging::EncodePng(sheet);
  if (!png.ok()) return 1;
  std::ofstream out(out_path, std::ios::binary);
  out.write(png->data(), static_cast<std::streamsize>(png->size()));
  return out ? 0 : 1;
}
