// --self-check: drives the wired McpServer through the MCP lifecycle in memory
// (mcp::RunSelfCheck), reports, and exits.
#pragma once

#include "common/result.h"
#include "server/app/config.h"
#include "server/app/wired_server.h"

namespace imgmcp::app {

// On success logs one line on stderr, "self-check ok: protocol …". Errors start with
// "self-check FAILED: " and say what failed.
Status RunSelfCheck(const Config& config, WiredServer& wired);

}  // namespace imgmcp::app
