// The session viewer as an MCP App (README.md, "See the chain"; the MCP Apps extension,
// @modelcontextprotocol/ext-apps): the resource ui://imgmcp/session-viewer.html
// (text/html;profile=mcp-app) and the `_meta.ui` that links the image tools to it. Hosts without
// MCP Apps see one more resource and ignore the tools' `_meta`; results do not change.
#pragma once

#include <string_view>

#include "common/json.h"
#include "mcp/resource.h"

namespace imgmcp::ui {

inline constexpr char kSessionViewerUri[] = "ui://imgmcp/session-viewer.html";
inline constexpr char kMcpAppMimeType[] = "text/html;profile=mcp-app";

// The app's HTML (session_viewer.html, embedded at build time). Valid for the process lifetime.
std::string_view SessionViewerHtml();

// A tool's `_meta` naming the viewer: {"ui": {"resourceUri": kSessionViewerUri}}.
Json ToolUiMeta();

// Lists and reads kSessionViewerUri; nothing else.
class UiResources final : public mcp::ResourceProvider {
 public:
  Result<mcp::ResourcePage> List(const mcp::Caller&,
                                 const std::optional<std::string>& cursor) override;
  Json Templates() override;
  bool Handles(const std::string& uri) const override;
  Result<Json> Read(const mcp::Caller&, const std::string& uri) override;
};

}  // namespace imgmcp::ui
