// imgmcp_contact_sheet OUT.png EDGE COLUMNS [--label TEXT] IMAGE [[--label TEXT] IMAGE]...
// Lays out thumbnails of the given images (in order) on a grid and writes one PNG. The demo uses
// it to show a session's whole version chain at a glance. `--label TEXT` names the next image:
// the sheet then has a caption band under every tile, drawn with imaging's bitmap font — the
// first word (e.g. "v3") in white, the rest (e.g. "edit") in the colour of that operation.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "common/log.h"
#include "imaging/codec.h"
#include "local_backend/bitmap_font.h"

namespace {

using imgmcp::imaging::Image;
using imgmcp::local::Rgb;

constexpr int kGap = 8;
constexpr int kTextScale = 2;
constexpr int kLabelBand = imgmcp::local::kGlyphHeight * kTextScale + 10;  // text + padding
constexpr Rgb kBackground{32, 32, 32};
constexpr Rgb kVersionColour{245, 245, 245};

struct Tile {
  std::string path;
  std::string label;
};

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

// The colours the session viewer gives the operations.
Rgb OperationColour(std::string_view word) {
  if (word.find("generate") != std::string_view::npos) return {169, 155, 255};
  if (word.find("edit") != std::string_view::npos) return {122, 180, 255};
  if (word.find("import") != std::string_view::npos) return {255, 194, 102};
  if (word.find("revert") != std::string_view::npos) return {95, 211, 193};
  return {190, 190, 190};
}

// "v3 edit" at (x, y), cut to `max_chars`.
void DrawLabel(Image& sheet, std::string label, int x, int y, int max_chars) {
  if (static_cast<int>(label.size()) > max_chars) label.resize(std::max(0, max_chars));
  const size_t space = label.find(' ');
  const std::string head = label.substr(0, space);
  imgmcp::local::DrawText(sheet, head, x, y, kTextScale, kVersionColour);
  if (space == std::string::npos) return;
  const std::string rest = label.substr(space);
  const int advance = imgmcp::local::kGlyphAdvance * kTextScale;
  imgmcp::local::DrawText(sheet, rest, x + static_cast<int>(head.size()) * advance, y, kTextScale,
                          OperationColour(rest));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    imgmcp::log::Error("contact_sheet",
                       "usage: imgmcp_contact_sheet OUT.png EDGE COLUMNS [--label TEXT] IMAGE...");
    return 2;
  }
  const std::string out_path = argv[1];
  const int edge = std::max(16, std::atoi(argv[2]));
  const int columns = std::max(1, std::atoi(argv[3]));
  std::vector<Tile> tiles;
  std::string pending_label;
  bool labelled = false;
  for (int i = 4; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--label") {
      if (i + 1 >= argc) {
        imgmcp::log::Error("contact_sheet", "--label needs a TEXT and an IMAGE after it");
        return 2;
      }
      pending_label = argv[++i];
      labelled = true;
      continue;
    }
    tiles.push_back({arg, pending_label});
    pending_label.clear();
  }
  if (tiles.empty()) {
    imgmcp::log::Error("contact_sheet", "no images given");
    return 2;
  }
  const int count = static_cast<int>(tiles.size());
  const int rows = (count + columns - 1) / columns;
  const int band = labelled ? kLabelBand : 0;
  Image sheet;
  sheet.width = columns * (edge + kGap) + kGap;
  sheet.height = rows * (edge + band + kGap) + kGap;
  sheet.rgba.assign(static_cast<size_t>(sheet.width) * sheet.height * 4, 0);
  for (size_t i = 0; i < sheet.rgba.size(); i += 4) {
    sheet.rgba[i] = kBackground.r;
    sheet.rgba[i + 1] = kBackground.g;
    sheet.rgba[i + 2] = kBackground.b;
    sheet.rgba[i + 3] = 255;
  }
  const int max_chars = (edge - 4) / (imgmcp::local::kGlyphAdvance * kTextScale);
  for (int n = 0; n < count; ++n) {
    std::string bytes;
    if (!ReadFile(tiles[n].path, &bytes)) {
      imgmcp::log::Error("contact_sheet", "cannot read " + tiles[n].path);
      return 1;
    }
    auto decoded = imgmcp::imaging::Decode(bytes);
    if (!decoded.ok()) {
      imgmcp::log::Error("contact_sheet", tiles[n].path + ": " + decoded.error().message);
      return 1;
    }
    const double scale = static_cast<double>(edge) / std::max(decoded->width, decoded->height);
    const int w = std::max(1, static_cast<int>(decoded->width * scale));
    const int h = std::max(1, static_cast<int>(decoded->height * scale));
    auto thumb = imgmcp::imaging::Resize(*decoded, w, h);
    if (!thumb.ok()) return 1;
    const int cell_x = kGap + (n % columns) * (edge + kGap);
    const int cell_y = kGap + (n / columns) * (edge + band + kGap);
    const int ox = cell_x + (edge - w) / 2;
    const int oy = cell_y + (edge - h) / 2;
    for (int y = 0; y < h; ++y) {
      std::copy_n(thumb->Pixel(0, y), static_cast<size_t>(w) * 4, sheet.Pixel(ox, oy + y));
    }
    if (!tiles[n].label.empty()) {
      DrawLabel(sheet, tiles[n].label, cell_x + 2, cell_y + edge + 5, max_chars);
    }
  }
  auto png = imgmcp::imaging::EncodePng(sheet);
  if (!png.ok()) return 1;
  std::ofstream out(out_path, std::ios::binary);
  out.write(png->data(), static_cast<std::streamsize>(png->size()));
  return out ? 0 : 1;
}
