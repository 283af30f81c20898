// Builds tool results: a text block (summary + the structured JSON), the image block chosen by
// `inline`, and a resource_link. structuredContent never carries base64.
#pragma once

#include <future>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "imaging/codec.h"
#include "mcp/tool.h"
#include "session/session_store.h"

namespace imgmcp::tools {

enum class InlineMode { kPreview, kFull, kNone };
const std::vector<std::string>& InlineModeNames();                   // "preview", "full", "none"
InlineMode ParseInlineMode(const std::optional<std::string>& name);  // name already validated

// Prompts can be 100 KB; results carry them cut (at a UTF-8 boundary, with "prompt_truncated" and
// "prompt_bytes"), so a result stays small however long the prompts and the session are. The
// session's manifest resource (imgmcp://sessions/{id}) has them whole.
inline constexpr size_t kResultPromptBytes = 300;   // a version's own prompt
inline constexpr size_t kHistoryPromptBytes = 120;  // each history entry's
inline constexpr size_t kWholePrompt = std::string::npos;

// The structuredContent fields common to every successful result for a version.
Json VersionStructuredContent(const session::VersionInfo& version,
                              size_t max_prompt_bytes = kWholePrompt);
// The same fields for a session with no image (version 0, empty strings).
Json EmptySessionStructuredContent(const std::string& session_id, const std::string& backend,
                                   const std::string& model);

// {version, operation, prompt, created_at, mime_type, bytes, sha256, parent_version?}: for an edit
// the version it was made from, for a revert the version it restored.
Json HistoryEntryJson(const session::VersionInfo& version, size_t max_prompt_bytes = kWholePrompt);

// What goes into content besides the text block.
struct ImageAttachment {
  InlineMode mode = InlineMode::kPreview;
  const std::string* bytes = nullptr;  // full-resolution bytes of the version (may be null)
  std::string mime_type;
};

// The image block for a result, made before the result itself (it is the expensive part: a
// preview, or megabytes of base64), so it can be built while the version is being committed.
struct PreparedImage {
  Json block;                 // the content block; null when there is none
  std::string preview_error;  // why a requested preview could not be made (told in the summary)
};

// Builds the image block for `image` (read-only use of *image.bytes).
PreparedImage PrepareImage(const ImageAttachment& image, const imaging::PreviewOptions& preview,
                           const imaging::DecodeLimits& limits);

// Runs PrepareImage on a helper thread, so the image block is built while the version is being
// committed. `bytes` must outlive this object; the destructor waits for the thread.
class ImagePreparation {
 public:
  ImagePreparation(InlineMode mode, const std::string& bytes, std::string mime_type,
                   const imaging::PreviewOptions& preview, const imaging::DecodeLimits& limits);
  ~ImagePreparation();
  ImagePreparation(const ImagePreparation&) = delete;
  ImagePreparation& operator=(const ImagePreparation&) = delete;

  // The block, waiting for it if needed; nullopt when the mode is kNone or no thread could be
  // started (the caller then builds it itself). Rethrows what PrepareImage threw. Once only.
  std::optional<PreparedImage> Take();

 private:
  std::future<PreparedImage> result_;
};

struct ResultParts {
  std::string summary;  // a one-line summary, then short lines (model text, usage, …) if any
  Json structured;      // structuredContent
  std::optional<ImageAttachment> image;   // built here when there is no `prepared` block
  std::optional<PreparedImage> prepared;  // from PrepareImage, used as is
  // The text block repeats structuredContent as JSON for clients that read only text. Clients of
  // 2025-06-18 and later read structuredContent, so its history is left out of their text copy:
  // nothing large is sent twice.
  bool history_in_text = true;
  std::optional<std::string> link_uri;  // resource_link target
  std::string link_name;
  std::string link_mime_type;
};

mcp::ToolResult BuildToolResult(ResultParts parts, const imaging::PreviewOptions& preview,
                                const imaging::DecodeLimits& limits);

std::string HumanBytes(int64_t bytes);
// A version in the words of a result's text: "1024x1024 image/png, 1.2 MB".
std::string DescribeVersion(const session::VersionInfo& v);

}  // namespace imgmcp::tools
