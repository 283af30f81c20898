#include "server/tools/uris.h"

#include "common/decimal.h"
#include "server/tools/arguments.h"
#include "session/data_dir.h"

namespace imgmcp::tools {
namespace {
constexpr std::string_view kPrefix = "imgmcp://sessions/";
constexpr std::string_view kVersions = "/versions/";
constexpr std::string_view kPreview = "/preview";
}  // namespace

std::string ManifestUri(const std::string& session_id) { return std::string(kPrefix) + session_id; }

std::string VersionUri(const std::string& session_id, int64_t version) {
  return ManifestUri(session_id) + std::string(kVersions) + std::to_string(version);
}

std::string PreviewUri(const std::string& session_id, int64_t version) {
  return VersionUri(session_id, version) + std::string(kPreview);
}

std::optional<ParsedUri> ParseSessionUri(const std::string& uri) {
  if (uri.compare(0, kPrefix.size(), kPrefix) != 0) return std::nullopt;
  std::string rest = uri.substr(kPrefix.size());
  ParsedUri parsed;
  const size_t slash = rest.find('/');
  if (slash == std::string::npos) {
    parsed.session_id = rest;
  } else {
    parsed.session_id = rest.substr(0, slash);
    const std::string tail = rest.substr(slash);
    if (tail.compare(0, kVersions.size(), kVersions) != 0) return std::nullopt;
    std::string number = tail.substr(kVersions.size());
    if (number.size() > kPreview.size() &&
        number.compare(number.size() - kPreview.size(), kPreview.size(), kPreview) == 0) {
      number.resize(number.size() - kPreview.size());
      parsed.preview = true;
    }
    // One spelling per version: "05" would name version 5 under a second URI.
    const std::optional<int64_t> v = ParseDecimal<int64_t>(number, 1, INT64_MAX);
    if (!v || number[0] == '0') return std::nullopt;
    parsed.version = *v;
  }
  if (!session::IsValidSessionId(parsed.session_id)) return std::nullopt;
  return parsed;
}

}  // namespace imgmcp::tools
