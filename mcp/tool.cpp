#include "mcp/tool.h"

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

std::string ArgumentErrorText(const std::string& tool, const Error& error) {
  return tool + " failed: " + error.message;
}

ToolSpec MakeToolSpec(ToolDefinition definition, ToolHandler handler, ToolAdmission admission) {
  ToolSpec spec;
  spec.definition = std::move(definition);
  if (!handler) return spec;  // the registry refuses it
  auto shared = std::make_shared<const ToolHandler>(std::move(handler));
  spec.admit = [shared, admission = std::move(admission)](Json arguments, const Caller& caller) {
    AdmittedCall call;
    auto args = std::make_shared<const Json>(std::move(arguments));
    if (admission) call.reservation = admission(*args, caller);
    call.run = [shared, args](ToolCallContext& ctx) { return (*shared)(*args, ctx); };
    return call;
  };
  return spec;
}

}  // namespace imgmcp::mcp
