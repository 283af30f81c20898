// Builds tool results: a text block (summary + the structured JSON), the image block chosen by
// `inline`, and a resource_link. structuredContent never carries base64.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "imaging/codec.h"
#include "server/mcp/tool.h"
#include "session/session_store.h"

namespace imgmcp::tools {

enum class InlineMode { kPreview, kFull, kNone };
const std::vector<std::string>& InlineModeNames();  // "preview", "full", "none"
InlineMode ParseInlineMode(const std::optional<std::string>& name);  // name already validated

// The structuredContent fields common to every successful result for a version.
Json VersionStructuredContent(const session::VersionInfo& version);
// The same fields for a session with no image (version 0, empty strings).
Json EmptySessionStructuredContent(const std::string& session_id, const std::string& backend,
                                   const std::string& model);

Json HistoryEntryJson(const session::VersionInfo& version);

// What goes into content besides the text block.
struct ImageAttachment {
  InlineMode mode = InlineMode::kPreview;
  const std::string* bytes = nullptr;  // full-resolution bytes of the version (may be null)
  std::string mime_type;
};

struct ResultParts {
  std::string summary;     // one line
  Json structured;         // structuredContent
  std::optional<ImageAttachment> image;
  std::optional<std::string> link_uri;  // resource_link target
  std::string link_name;
  std::string link_mime_type;
};

mcp::ToolResult BuildToolResult(const ResultParts& parts, const imaging::PreviewOptions& preview,
                                const imaging::DecodeLimits& limits);

std::string HumanBytes(int64_t bytes);

}  // namespace imgmcp::tools
