// The typed tool registry: definitions + handlers, registered once at start-up, then read-only.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/result.h"
#include "mcp/tool.h"

namespace imgmcp::mcp {

struct ToolPage {
  Json tools = Json::array();  // tools/list entries
  std::optional<std::string> next_cursor;
};

// Not thread-safe for Register; McpServer registers everything before the first connection and
// only reads afterwards, so lookups need no lock.
class ToolRegistry {
 public:
  // kInvalidArgument for a bad name (1–128 of [A-Za-z0-9_.-]), a duplicate, a missing handler or an
  // input schema whose root is not {"type":"object"}.
  Status Register(ToolSpec tool);

  const ToolSpec* Find(const std::string& name) const;
  // Every tool, in registration order.
  std::vector<const ToolSpec*> All() const;
  size_t size() const { return order_.size(); }
  bool empty() const { return order_.empty(); }

  // True when some tool's calls may become tasks (TaskSupport other than kForbidden).
  bool AnyTaskSupport() const;

  // One page of tools/list in registration order; a bad cursor is kInvalidArgument. With
  // `task_execution` (a 2025-11-25 session) each task-capable tool also shows
  // execution.taskSupport (legacy_task_json.h).
  Result<ToolPage> List(const std::optional<std::string>& cursor, size_t page_size,
                        bool task_execution = false) const;

 private:
  std::vector<std::unique_ptr<ToolSpec>> order_;
  std::map<std::string, const ToolSpec*, std::less<>> by_name_;
};

// The tools/list entry of one tool: name, title?, description, inputSchema, outputSchema?,
// annotations? (only the hints that are set).
Json ToolDefinitionToJson(const ToolDefinition& definition);
// The tools/call result: content, structuredContent (when set), isError. Moves out of `result`.
Json ToolResultToJson(ToolResult&& result);
// True for a valid MCP tool name.
bool IsValidToolName(const std::string& name);

}  // namespace imgmcp::mcp
