// What the protocol-core tests share: how long they wait, and the tool definition they register
// (an object schema, the name as its description, the given task support).
#pragma once

#include <chrono>
#include <string>

#include "mcp/tool.h"

namespace imgmcp::mcp {

// How long a test waits for something that should happen quickly.
inline constexpr std::chrono::milliseconds kWait{10000};

inline ToolDefinition Def(const std::string& name, TaskSupport support = TaskSupport::kForbidden) {
  ToolDefinition d;
  d.name = name;
  d.description = name;
  d.input_schema = {{"type", "object"}};
  d.task_support = support;
  return d;
}

}  // namespace imgmcp::mcp
