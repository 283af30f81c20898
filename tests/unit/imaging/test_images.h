// Helpers that build images and hand-crafted (possibly malicious) files for the imaging tests.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "imaging/codec.h"
#include "local_backend/colors.h"

namespace imgmcp::imaging {
// gtest prints colours as #rrggbb.
inline void PrintTo(const local::Rgb& c, std::ostream* os) { *os << local::ToHex(c); }
}  // namespace imgmcp::imaging

namespace imgmcp::imaging::testing {

Image Solid(int w, int h, local::Rgb c, uint8_t alpha = 255);
// Smooth gradients plus deterministic noise: "photo-like" content that does not compress well.
Image Photo(int w, int h, uint32_t seed = 1);
// A PNG file with the given IHDR fields and an IDAT holding `raw_zeros` zero bytes, deflated.
// Valid CRCs, so only the declared dimensions make it hostile.
std::string CraftPng(uint32_t width, uint32_t height, uint64_t raw_zeros, uint8_t color_type = 6);
std::string PngOf(const Image& img);
std::string JpegOf(const Image& img, int quality = 90);
local::Rgb At(const Image& img, int x, int y);

}  // namespace imgmcp::imaging::testing
