// What the conformance fixtures (conformance_fixtures.cpp, task_fixtures.cpp) ask a client for
// when a tool answers input_required (the 2026-07-28 multi round-trip flows): one elicitation
// request, and the result that carries a set of requests.
#pragma once

#include <optional>
#include <string>

#include "common/json.h"
#include "mcp/tool.h"

namespace imgmcp::conformance {

// An elicitation/create request for one field of JSON type `type`.
Json ElicitationRequest(const std::string& message, const std::string& field, const char* type);
// An input_required result asking for `requests` (an object: key → request), with the opaque
// `state` the client sends back on its retry.
mcp::ToolResult AskFor(Json requests, std::optional<std::string> state = std::nullopt);

}  // namespace imgmcp::conformance
