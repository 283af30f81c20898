#include "server/conformance/fixture_requests.h"

#include <utility>

namespace imgmcp::conformance {

Json ElicitationRequest(const std::string& message, const std::string& field, const char* type) {
  Json schema = {
      {"type", "object"}, {"properties", {{field, {{"type", type}}}}}, {"required", {field}}};
  return {{"method", "elicitation/create"},
          {"params", {{"message", message}, {"requestedSchema", std::move(schema)}}}};
}

mcp::ToolResult AskFor(Json requests, std::optional<std::string> state) {
  mcp::ToolResult r;
  r.input_required = mcp::InputRequest{std::move(requests), std::move(state)};
  return r;
}

}  // namespace imgmcp::conformance
