// A tiny built-in 5x7 bitmap font (ASCII letters, digits, common punctuation) for the local
// backend's `text` edit. Lowercase letters render as capitals; unknown characters as '?'.
#pragma once

#include <string_view>

#include "imaging/codec.h"
#include "local_backend/colors.h"

namespace imgmcp::local {

constexpr int kGlyphWidth = 5;
constexpr int kGlyphHeight = 7;
constexpr int kGlyphAdvance = 6;  // glyph width plus one column of spacing

// Draws `text` with its top-left at (x, y); each font pixel becomes a scale x scale block. Pixels
// outside the image are clipped.
void DrawText(imaging::Image& image, std::string_view text, int x, int y, int scale, Rgb color);

}  // namespace imgmcp::local
