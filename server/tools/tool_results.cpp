#include "server/tools/tool_results.h"

#include <cstdio>
#include <system_error>
#include <utility>

#include "common/base64.h"
#include "common/log.h"
#include "mcp/json_writer.h"
#include "server/tools/uris.h"
#include "server/tools/version_details.h"

namespace imgmcp::tools {

const std::vector<std::string>& InlineModeNames() {
  static const std::vector<std::string> kNames = {"preview", "full", "none"};
  return kNames;
}

InlineMode ParseInlineMode(const std::optional<std::string>& name) {
  if (!name || *name == "preview") return InlineMode::kPreview;
  return *name == "full" ? InlineMode::kFull : InlineMode::kNone;
}

std::string HumanBytes(int64_t bytes) {
  char buf[32];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  } else if (bytes < 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KB", static_cast<double>(bytes) / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  }
  return buf;
}

std::string DescribeVersion(const session::VersionInfo& v) {
  return std::to_string(v.width) + "x" + std::to_string(v.height) + " " + v.mime_type + ", " +
         HumanBytes(v.bytes);
}

namespace {

// `prompt` cut to at most max_bytes without splitting a UTF-8 sequence; sets the markers.
void PutPrompt(Json& j, const std::string& prompt, size_t max_bytes) {
  if (prompt.size() <= max_bytes) {
    j["prompt"] = prompt;
    return;
  }
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(prompt[cut]) & 0xC0) == 0x80) --cut;
  j["prompt"] = prompt.substr(0, cut) + "…";
  j["prompt_truncated"] = true;
  j["prompt_bytes"] = prompt.size();
}

}  // namespace

Json VersionStructuredContent(const session::VersionInfo& v, size_t max_prompt_bytes) {
  // Member by member: an initializer list would build and copy a Json per entry.
  Json j = Json::object();
  j["session_id"] = v.session_id;
  j["version"] = v.version;
  j["width"] = v.width;
  j["height"] = v.height;
  j["mime_type"] = v.mime_type;
  j["bytes"] = v.bytes;
  j["sha256"] = v.sha256;
  j["path"] = v.path.string();
  j["uri"] = VersionUri(v.session_id, v.version);
  j["backend"] = v.backend;
  j["model"] = v.model;
  j["operation"] = v.operation;
  j["created_at"] = v.created_at;
  PutPrompt(j, v.prompt, max_prompt_bytes);
  if (v.parent) j["parent_version"] = *v.parent;
  if (Json params = ParamsOf(v.details); !params.empty()) j["params"] = std::move(params);
  return j;
}

Json EmptySessionStructuredContent(const std::string& session_id, const std::string& backend,
                                   const std::string& model) {
  return {{"session_id", session_id},
          {"version", 0},
          {"width", 0},
          {"height", 0},
          {"mime_type", ""},
          {"bytes", 0},
          {"sha256", ""},
          {"path", ""},
          {"uri", ManifestUri(session_id)},
          {"backend", backend},
          {"model", model}};
}

Json HistoryEntryJson(const session::VersionInfo& v, size_t max_prompt_bytes) {
  Json j = {{"version", v.version},     {"operation", v.operation}, {"created_at", v.created_at},
            {"mime_type", v.mime_type}, {"bytes", v.bytes},         {"sha256", v.sha256}};
  PutPrompt(j, v.prompt, max_prompt_bytes);
  if (v.parent) j["parent_version"] = *v.parent;
  // The parameters it was made with (generate and edit; imports and reverts have none).
  if (Json params = ParamsOf(v.details); !params.empty()) j["params"] = std::move(params);
  return j;
}

PreparedImage PrepareImage(const ImageAttachment& image, const imaging::PreviewOptions& preview,
                           const imaging::DecodeLimits& limits) {
  PreparedImage out;
  if (image.bytes == nullptr || image.mode == InlineMode::kNone) return out;
  const std::string* bytes = image.bytes;
  std::string mime = image.mime_type;
  imaging::EncodedImage small;
  if (image.mode == InlineMode::kPreview) {
    auto made = imaging::MakePreview(*bytes, preview, limits);
    if (!made.ok()) {
      out.preview_error = made.error().message;
      return out;
    }
    small = std::move(*made);
    bytes = &small.bytes;
    mime = small.mime_type;
  }
  std::string data;
  data.reserve(Base64EncodedSize(bytes->size()));
  Base64EncodeAppend(*bytes, data);
  out.block = {{"type", "image"}, {"data", std::move(data)}, {"mimeType", mime}};
  return out;
}

ImagePreparation::ImagePreparation(InlineMode mode, const std::string& bytes, std::string mime_type,
                                   const imaging::PreviewOptions& preview,
                                   const imaging::DecodeLimits& limits) {
  if (mode == InlineMode::kNone) return;
  try {
    result_ = std::async(
        std::launch::async, [mode, &bytes, mime = std::move(mime_type), preview, limits] {
          return PrepareImage(ImageAttachment{mode, &bytes, mime}, preview, limits);
        });
  } catch (const std::system_error& e) {  // no thread to spare: Take() says so
    log::Warn("tools", std::string("building the image block inline: ") + e.what());
  }
}

ImagePreparation::~ImagePreparation() {
  if (result_.valid()) result_.wait();  // the thread reads the caller's bytes
}

std::optional<PreparedImage> ImagePreparation::Take() {
  if (!result_.valid()) return std::nullopt;
  return result_.get();
}

mcp::ToolResult BuildToolResult(ResultParts parts, const imaging::PreviewOptions& preview,
                                const imaging::DecodeLimits& limits) {
  mcp::ToolResult result;
  if (!parts.prepared && parts.image) {
    parts.prepared = PrepareImage(*parts.image, preview, limits);
  }
  PreparedImage image = parts.prepared ? std::move(*parts.prepared) : PreparedImage{};
  std::string text = parts.summary;
  if (!image.preview_error.empty()) {
    text += " (no inline preview: " + image.preview_error + "; read " +
            parts.link_uri.value_or("the file") + " instead)";
  }
  std::string copy;
  if (!parts.history_in_text && parts.structured.contains("history")) {
    Json without = parts.structured;
    const size_t entries = without["history"].size();
    without.erase("history");
    copy = mcp::DumpCompactJson(without) + "\n(history: " + std::to_string(entries) +
           (entries == 1 ? " entry" : " entries") + " in structuredContent)";
  } else {
    copy = mcp::DumpCompactJson(parts.structured);
  }
  result.content.push_back({{"type", "text"}, {"text", text + "\n" + copy}});
  if (!image.block.is_null()) result.content.push_back(std::move(image.block));
  if (parts.link_uri) {
    Json link = {{"type", "resource_link"}, {"uri", *parts.link_uri}, {"name", parts.link_name}};
    if (!parts.link_mime_type.empty()) link["mimeType"] = parts.link_mime_type;
    result.content.push_back(std::move(link));
  }
  result.structured_content = std::move(parts.structured);
  return result;
}

}  // namespace imgmcp::tools
