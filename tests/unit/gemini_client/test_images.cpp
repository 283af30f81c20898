#include "tests/unit/gemini_client/test_images.h"

#include "imaging/codec.h"

namespace imgmcp::gemini::testing {
namespace {

imaging::Image Solid(int width, int height, uint8_t r, uint8_t g, uint8_t b) {
  imaging::Image image;
  image.width = width;
  image.height = height;
  image.rgba.resize(static_cast<size_t>(width) * height * 4);
  for (size_t i = 0; i < image.rgba.size(); i += 4) {
    image.rgba[i] = r;
    image.rgba[i + 1] = g;
    image.rgba[i + 2] = b;
    image.rgba[i + 3] = 255;
  }
  return image;
}

}  // namespace

std::string SolidPng(int width, int height, uint8_t r, uint8_t g, uint8_t b) {
  return imaging::EncodePng(Solid(width, height, r, g, b)).value();
}

std::string SolidJpeg(int width, int height, uint8_t r, uint8_t g, uint8_t b) {
  return imaging::EncodeJpeg(Solid(width, height, r, g, b)).value();
}

}  // namespace imgmcp::gemini::testing
