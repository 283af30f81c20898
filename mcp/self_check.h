// --self-check: drives a fully wired McpServer through the MCP lifecycle in memory (no stdio) and
// checks its answers: the protocol half of imgmcp --self-check (server/app/self_check.h).
#pragma once

#include <string>

#include "common/result.h"

namespace imgmcp::mcp {

class McpServer;

// A one-line summary on success ("protocol 2025-11-25, N tools, …"), else what failed.
Result<std::string> RunSelfCheck(McpServer& server);

}  // namespace imgmcp::mcp
