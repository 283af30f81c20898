// MCP protocol revisions this server speaks, the two eras they belong to, and the rules that
// depend on them (2026-07-28/basic/versioning).
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace imgmcp::mcp {

// Legacy: a session opened by initialize (2025-11-25 and earlier). Modern: every request carries
// its version, capabilities and client in _meta (2026-07-28 and later).
enum class Era { kLegacy, kModern };

inline constexpr std::string_view kModernProtocolVersion = "2026-07-28";
inline constexpr std::string_view kLatestProtocolVersion = "2025-11-25";  // latest legacy
// The versions initialize negotiates.
inline constexpr std::array<std::string_view, 3> kSupportedProtocolVersions = {
    "2025-11-25", "2025-06-18", "2025-03-26"};
// Every version imgmcp speaks, newest first (server/discover's supportedVersions, and the
// `supported` list of an unsupported-version error).
inline constexpr std::array<std::string_view, 4> kAllProtocolVersions = {
    "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"};

inline bool IsSupportedProtocolVersion(std::string_view version) {
  for (std::string_view v : kSupportedProtocolVersions) {
    if (v == version) return true;
  }
  return false;
}

// A version name of the modern era: 2026-07-28 or anything that sorts after it (a later
// revision, or a name such as "v999.0.0" that no legacy revision has). Such a name is a modern
// claim even when imgmcp does not speak that version (it is then refused with -32022).
inline bool IsModernVersionName(std::string_view version) {
  return version >= kModernProtocolVersion;
}

// The modern versions a request's _meta may name.
inline bool IsSupportedModernVersion(std::string_view version) {
  return version == kModernProtocolVersion;
}

// The version answered to an initialize request: the requested one when supported, else the
// latest (never an error, per basic/lifecycle).
inline std::string NegotiateProtocolVersion(std::string_view requested) {
  return std::string(IsSupportedProtocolVersion(requested) ? requested : kLatestProtocolVersion);
}

// JSON-RPC batches exist only in 2025-03-26.
inline bool BatchesAllowed(std::string_view version) { return version == "2025-03-26"; }

}  // namespace imgmcp::mcp
