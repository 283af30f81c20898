// --self-check: opens what the server would run on — the backend (for gemini, its network module;
// no generation call is made) and the session store (the data dir, or PostgreSQL) — then drives
// the wired McpServer through the MCP lifecycle in memory (mcp::RunSelfCheck).
#pragma once

#include "common/result.h"
#include "server/app/config.h"
#include "server/app/wired_server.h"

namespace imgmcp::app {

// On success logs one line on stderr, "self-check ok: backend …, model …; store …, data dir …;
// protocol …". Errors start with "self-check FAILED: " and say what failed. Never prints the key.
Status RunSelfCheck(const Config& config, WiredServer& wired);

}  // namespace imgmcp::app
