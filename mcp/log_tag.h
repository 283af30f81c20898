// The tag of the MCP protocol core's log lines (common/log.h): one name for every file of the
// module.
#pragma once

namespace imgmcp::mcp {

inline constexpr char kLog[] = "mcp";

}  // namespace imgmcp::mcp
