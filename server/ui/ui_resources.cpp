#include "server/ui/ui_resources.h"

#include <string>

namespace imgmcp::ui {
namespace {

// The resource's `_meta.ui`, in its listing and in its contents. No `csp`: the app needs no
// origin beyond itself (images arrive as data: URLs through resources/read), so the hosts'
// restrictive default applies.
Json ResourceUiMeta() { return {{"ui", {{"prefersBorder", true}}}}; }

}  // namespace

Json ToolUiMeta() { return {{"ui", {{"resourceUri", kSessionViewerUri}}}}; }

Result<mcp::ResourcePage> UiResources::List(const mcp::Caller&,
                                            const std::optional<std::string>& cursor) {
  // One resource, one page: a cursor can only come from another provider's page.
  if (cursor) return MakeError(ErrorCode::kInvalidArgument, "Invalid cursor");
  mcp::ResourcePage page;
  page.resources.push_back(
      {{"uri", kSessionViewerUri},
       {"name", "session-viewer"},
       {"title", "imgmcp session viewer"},
       {"description",
        "Interactive viewer (MCP App) for an image session: the timeline of versions, any "
        "version large, a before/after comparison of two versions, revert and edit-from."},
       {"mimeType", kMcpAppMimeType},
       {"size", SessionViewerHtml().size()},
       {"_meta", ResourceUiMeta()}});
  return page;
}

Json UiResources::Templates() { return Json::array(); }

bool UiResources::Handles(const std::string& uri) const { return uri == kSessionViewerUri; }

Result<Json> UiResources::Read(const mcp::Caller&, const std::string& uri) {
  if (uri != kSessionViewerUri) return mcp::ResourceNotFoundError(uri);
  return Json{{"contents", Json::array({{{"uri", kSessionViewerUri},
                                         {"mimeType", kMcpAppMimeType},
                                         {"text", std::string(SessionViewerHtml())},
                                         {"_meta", ResourceUiMeta()}}})}};
}

}  // namespace imgmcp::ui
