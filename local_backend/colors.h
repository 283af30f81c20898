// Colours for the local backend: CSS named colours and #rrggbb / #rgb, parsed case-insensitively.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace imgmcp::local {

struct Rgb {
  uint8_t r = 0;
  uint8_t g = 0;
  uint8_t b = 0;
  bool operator==(const Rgb&) const = default;
};

// "red", "LightBlue", "#ff8000", "#f80". nullopt for anything else.
std::optional<Rgb> ParseColor(std::string_view text);

// Every colour mentioned in free text, in order of first mention, without duplicates. Also joins
// two adjacent words ("light blue" -> lightblue).
std::vector<Rgb> FindColors(std::string_view text);

// "#rrggbb".
std::string ToHex(Rgb c);

}  // namespace imgmcp::local
