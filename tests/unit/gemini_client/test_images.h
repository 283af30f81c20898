// Small encoded images for the Gemini client tests.
#pragma once

#include <cstdint>
#include <string>

namespace imgmcp::gemini::testing {

std::string SolidPng(int width, int height, uint8_t r, uint8_t g, uint8_t b);
std::string SolidJpeg(int width, int height, uint8_t r, uint8_t g, uint8_t b);
inline std::string GifBytes() { return std::string("GIF89a\x01\x00\x01\x00\x00\x00\x00;", 13); }

}  // namespace imgmcp::gemini::testing
