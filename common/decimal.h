// ParseDecimal: the one way imgmcp reads a decimal integer from text (flags, ports, header
// values, cursors, URIs, database text). Strict where the std functions are lenient: the whole
// text must be the number — no leading or trailing spaces, no '+', no "0x", no trailing junk —
// and a '-' only for a signed type (std::strtoul reads "-1" as the largest value, std::stoi
// skips leading spaces and stops at junk, both throw or wrap on overflow).
#pragma once

#include <charconv>
#include <concepts>
#include <limits>
#include <optional>
#include <string_view>

namespace imgmcp {

// An integer type other than bool and the character types.
template <typename T>
concept DecimalInteger = std::integral<T> && !std::same_as<T, bool> && !std::same_as<T, char> &&
                         !std::same_as<T, char8_t> && !std::same_as<T, char16_t> &&
                         !std::same_as<T, char32_t> && !std::same_as<T, wchar_t>;

// The value of `text` when all of it is a decimal number of type T: one or more digits 0-9,
// after a '-' only when T is signed; leading zeros are allowed ("007" is 7). nullopt for anything
// else, including an empty text and a value outside T's range.
template <DecimalInteger T>
std::optional<T> ParseDecimal(std::string_view text) {
  T value{};
  const char* const end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return value;
}

// ParseDecimal, in a range: nullopt also when the value is below `min` or above `max`.
template <DecimalInteger T>
std::optional<T> ParseDecimal(std::string_view text, T min, T max) {
  const std::optional<T> value = ParseDecimal<T>(text);
  if (!value || *value < min || *value > max) return std::nullopt;
  return value;
}

// ParseDecimal, except that a well-formed number beyond T's range reads as T's largest value
// (or smallest, for a negative one) instead of nullopt: for sizes and lengths, where a number
// too big to hold must still read as too big.
template <DecimalInteger T>
std::optional<T> ParseDecimalSaturating(std::string_view text) {
  T value{};
  const char* const end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || stop != end) return std::nullopt;
  if (error == std::errc::result_out_of_range) {
    return text.front() == '-' ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
  }
  if (error != std::errc()) return std::nullopt;
  return value;
}

}  // namespace imgmcp
