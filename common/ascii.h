// ASCII helpers for protocol and prompt text (header names, schemes, colour names, edit prompts):
// character classes, case mapping, case-blind comparison and trimming, locale-independent, so "I"
// lowers to "i" whatever the process locale. Use these, not <cctype>'s tolower/isspace/isalnum
// (which follow the locale and take an unsigned char).
#pragma once

#include <string>
#include <string_view>

namespace imgmcp {

// `c` with A-Z mapped to a-z (ToAsciiLower) or a-z to A-Z (ToAsciiUpper); other bytes unchanged.
constexpr char ToAsciiLower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
constexpr char ToAsciiUpper(char c) {
  return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
}
// Space, tab, \n, \v, \f or \r: what isspace() accepts in the C locale.
constexpr bool IsAsciiWhitespace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
// 0-9.
constexpr bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }
// A-Z, a-z or 0-9: what isalnum() accepts in the C locale.
constexpr bool IsAsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsAsciiDigit(c);
}

// `text` with A-Z mapped to a-z; every other byte unchanged.
std::string AsciiLower(std::string_view text);
// Equality ignoring ASCII case, without building lower-cased copies (runs on every request).
bool EqualsIgnoreAsciiCase(std::string_view a, std::string_view b);
// True when `text` begins with `prefix`, ignoring ASCII case ("Data:" starts with "data:").
bool StartsWithIgnoreAsciiCase(std::string_view text, std::string_view prefix);
// `text` without leading and trailing spaces and tabs (HTTP's optional whitespace, RFC 9110
// §5.6.3).
std::string_view TrimSpacesAndTabs(std::string_view text);
// `text` without leading and trailing ASCII whitespace (IsAsciiWhitespace): for prompts and
// messages, where line ends count as blank too.
std::string_view TrimAsciiWhitespace(std::string_view text);
// An application/x-www-form-urlencoded value: every byte but A-Z a-z 0-9 - . _ ~ as %XX.
std::string FormEncode(std::string_view value);

}  // namespace imgmcp
