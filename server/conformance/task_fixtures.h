// The conformance suite's fixtures for the tasks extension (mcp/task_runner.h), with the
// names and behaviour its tasks-* scenarios expect: greet (never a task), slow_compute (a task
// unless it has nothing to wait for), failing_job and protocol_error_job (tasks that end badly),
// confirm_delete and multi_input (tasks that ask the client for input) and test_tool_with_task
// (asks with input_required first, then becomes a task). Registered with the other fixtures.
#pragma once

#include "common/result.h"
#include "mcp/server.h"

namespace imgmcp::conformance {

Status RegisterTaskFixtures(mcp::McpServer& server);

}  // namespace imgmcp::conformance
