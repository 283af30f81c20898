// ASCII case helpers for protocol text (header names, schemes, colour names, edit prompts):
// locale-independent, so "I" lowers to "i" whatever the process locale.
#pragma once

#include <string>
#include <string_view>

namespace imgmcp {

// `text` with A-Z mapped to a-z; every other byte unchanged.
std::string AsciiLower(std::string_view text);
// Equality ignoring ASCII case, without building lower-cased copies (runs on every request).
bool EqualsIgnoreAsciiCase(std::string_view a, std::string_view b);
// `text` without leading and trailing spaces and tabs (HTTP's optional whitespace, RFC 9110
// §5.6.3).
std::string_view TrimSpacesAndTabs(std::string_view text);

}  // namespace imgmcp
