// SplitHostPort: the one reading of "host", "host:port", "[v6]" and "[v6]:port" in imgmcp — the
// --http/--metrics listen address, proxy URLs and the Gemini endpoint, NO_PROXY entries.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace imgmcp {

struct HostPort {
  std::string host;         // brackets removed: "::1", "example.com", "" when nothing precedes ':'
  std::optional<int> port;  // 0-65535; nullopt when the text names none ("host" or "host:")
  bool bracketed = false;   // the host was written in brackets ("[::1]")
};

// Splits `text` at the colon before the port. An IPv6 address must be in brackets ("[::1]:80"):
// a text with more than one colon outside brackets is refused rather than guessed at, as is a
// '[' without its ']', anything but ":PORT" after the ']', and a port that is not 0-65535 in
// plain digits. An empty host is returned as such (the caller decides). kInvalidArgument errors
// say what is wrong, for the caller to put after its own context (WithContext).
Result<HostPort> SplitHostPort(std::string_view text);

}  // namespace imgmcp
