// Image generation for the local backend: sizes per aspect ratio and a deterministic picture
// derived from the prompt (palette from colours it names, shapes seeded by its FNV-1a hash).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "imaging/codec.h"
#include "imaging/generation_params.h"
#include "local_backend/colors.h"

namespace imgmcp::local {

// Gemini's 1K table: "1:1" -> 1024x1024, "16:9" -> 1344x768, ... (PixelSize("1K", ratio)).
// kInvalidArgument (listing the allowed ratios) for anything else.
Result<imaging::ImageSize> SizeForAspectRatio(std::string_view aspect_ratio);
// "1:1, 2:3, 3:2, 3:4, 4:3, 4:5, 5:4, 9:16, 16:9, 21:9, 1:4, 4:1, 1:8, 8:1".
std::string AllowedAspectRatios();

// 64-bit FNV-1a.
uint64_t Fnv1a64(std::string_view bytes);

struct GeneratedImage {
  imaging::Image image;
  std::string description;  // one line: what was drawn (palette, shapes, seed)
};

// Renders the picture for `prompt` at width x height. `extra_colors` (e.g. the mean colours of
// reference images) join the palette after the colours the prompt names. A prompt starting with
// "solid <colour>" gives a uniform image of that colour. kInvalidArgument for an empty prompt or
// a "solid" prompt without a colour.
Result<GeneratedImage> GenerateImage(std::string_view prompt, int width, int height,
                                     const std::vector<Rgb>& extra_colors = {});

}  // namespace imgmcp::local
