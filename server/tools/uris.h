// imgmcp:// resource URIs for sessions and versions, built and parsed in one place.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace imgmcp::tools {

std::string ManifestUri(const std::string& session_id);                  // imgmcp://sessions/{id}
std::string VersionUri(const std::string& session_id, int64_t version);  // …/versions/{n}
std::string PreviewUri(const std::string& session_id, int64_t version);  // …/versions/{n}/preview

struct ParsedUri {
  std::string session_id;
  std::optional<int64_t> version;  // set for version URIs
  bool preview = false;            // …/versions/{n}/preview
};
// nullopt when `uri` is not an imgmcp session, version or preview URI with a valid id and a
// number in its one spelling (no sign, no leading zero).
std::optional<ParsedUri> ParseSessionUri(const std::string& uri);

}  // namespace imgmcp::tools
