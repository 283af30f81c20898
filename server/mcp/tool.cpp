#include "server/mcp/tool.h"

#include <utility>

namespace imgmcp::mcp {

namespace {
Json TextBlock(std::string text) {
  Json block = Json::object();
  block["type"] = "text";
  block["text"] = std::move(text);
  return block;
}
}  // namespace

ToolResult ToolResult::Text(std::string text) {
  ToolResult result;
  result.content.push_back(TextBlock(std::move(text)));
  return result;
}

ToolResult ToolResult::ErrorText(std::string text) {
  ToolResult result = Text(std::move(text));
  result.is_error = true;
  return result;
}

}  // namespace imgmcp::mcp
