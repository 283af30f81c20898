// MCP log level names (RFC 5424 as MCP spells them) <-> LogLevel.
#pragma once

#include <optional>
#include <string_view>

#include "mcp/tool.h"

namespace imgmcp::mcp {

// "debug" … "emergency"; nullopt for anything else.
std::optional<LogLevel> ParseLogLevel(std::string_view name);
const char* LogLevelName(LogLevel level);

}  // namespace imgmcp::mcp
