// MCP protocol revisions this server speaks, and the rules that depend on them.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace imgmcp::mcp {

inline constexpr std::string_view kLatestProtocolVersion = "2025-11-25";
inline constexpr std::array<std::string_view, 3> kSupportedProtocolVersions = {
    "2025-11-25", "2025-06-18", "2025-03-26"};

inline bool IsSupportedProtocolVersion(std::string_view version) {
  for (std::string_view v : kSupportedProtocolVersions) {
    if (v == version) return true;
  }
  return false;
}

// The version answered to an initialize request: the requested one when supported, else the
// latest (never an error, per basic/lifecycle).
inline std::string NegotiateProtocolVersion(std::string_view requested) {
  return std::string(IsSupportedProtocolVersion(requested) ? requested : kLatestProtocolVersion);
}

// JSON-RPC batches exist only in 2025-03-26.
inline bool BatchesAllowed(std::string_view version) { return version == "2025-03-26"; }

}  // namespace imgmcp::mcp
