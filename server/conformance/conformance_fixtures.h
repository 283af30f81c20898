// The official MCP conformance suite's test fixtures (tools, test:// resources, prompts and a
// completion handler), with the names and behaviour of the suite's reference "everything" server.
// The suite's versions are pinned in tests/conformance/package.json; the conformance.server*
// tests run it against these fixtures.
// Registered only with --conformance-fixtures; they are also the protocol layer's own test tools.
#pragma once

#include "common/result.h"
#include "mcp/server.h"

namespace imgmcp::conformance {

// Registers every fixture on `server` (before its first connection).
Status RegisterConformanceFixtures(mcp::McpServer& server);

}  // namespace imgmcp::conformance
