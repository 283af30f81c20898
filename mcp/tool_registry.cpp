#include "mcp/tool_registry.h"

#include <algorithm>
#include <utility>

#include "common/ascii.h"
#include "mcp/legacy_task_json.h"
#include "mcp/pagination.h"
#include "mcp/protocol.h"

namespace imgmcp::mcp {

namespace {
constexpr char kToolCursorKind[] = "tools";
}  // namespace

bool IsValidToolName(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return IsAsciiAlnum(c) || c == '_' || c == '-' || c == '.'; });
}

Status ToolRegistry::Register(ToolSpec tool) {
  const ToolDefinition& definition = tool.definition;
  if (!IsValidToolName(definition.name)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "invalid tool name '" + definition.name + "': use 1-128 of [A-Za-z0-9_.-]");
  }
  if (by_name_.count(definition.name)) {
    return MakeError(ErrorCode::kInvalidArgument, "duplicate tool name: " + definition.name);
  }
  if (!tool.admit) {
    return MakeError(ErrorCode::kInvalidArgument, "tool " + definition.name + " has no handler");
  }
  const Json& schema = definition.input_schema;
  if (!schema.is_object() || schema.value("type", Json()) != "object") {
    return MakeError(
        ErrorCode::kInvalidArgument,
        "tool " + definition.name + ": inputSchema root must be {\"type\":\"object\"}");
  }
  if (definition.output_schema && (!definition.output_schema->is_object() ||
                                   definition.output_schema->value("type", Json()) != "object")) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "tool " + definition.name + ": outputSchema root must be an object type");
  }
  auto owned = std::make_unique<ToolSpec>(std::move(tool));
  by_name_.emplace(owned->definition.name, owned.get());
  order_.push_back(std::move(owned));
  return Status::Ok();
}

const ToolSpec* ToolRegistry::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<const ToolSpec*> ToolRegistry::All() const {
  std::vector<const ToolSpec*> all;
  all.reserve(order_.size());
  for (const auto& tool : order_) all.push_back(tool.get());
  return all;
}

bool ToolRegistry::AnyTaskSupport() const {
  return std::any_of(order_.begin(), order_.end(), [](const auto& tool) {
    return tool->definition.task_support != TaskSupport::kForbidden;
  });
}

Result<ToolPage> ToolRegistry::List(const std::optional<std::string>& cursor, size_t page_size,
                                    bool task_execution) const {
  auto window = PageOf(kToolCursorKind, cursor, order_.size(), page_size);
  if (!window.ok()) return window.error();
  ToolPage page;
  for (size_t i = window->begin; i < window->end; ++i) {
    const ToolDefinition& definition = order_[i]->definition;
    Json tool = ToolDefinitionToJson(definition);
    if (auto support = LegacyTaskSupport(definition.task_support); support && task_execution) {
      tool["execution"] = Json{{"taskSupport", *support}};
    }
    page.tools.push_back(std::move(tool));
  }
  page.next_cursor = window->next_cursor;
  return page;
}

Json ToolDefinitionToJson(const ToolDefinition& definition) {
  Json tool = Json::object();
  tool["name"] = definition.name;
  if (!definition.title.empty()) tool["title"] = definition.title;
  tool["description"] = definition.description;
  tool["inputSchema"] = definition.input_schema;
  if (definition.output_schema) tool["outputSchema"] = *definition.output_schema;
  const ToolAnnotations& a = definition.annotations;
  Json annotations = Json::object();
  if (a.read_only) annotations["readOnlyHint"] = *a.read_only;
  if (a.destructive) annotations["destructiveHint"] = *a.destructive;
  if (a.idempotent) annotations["idempotentHint"] = *a.idempotent;
  if (a.open_world) annotations["openWorldHint"] = *a.open_world;
  if (!annotations.empty()) tool["annotations"] = std::move(annotations);
  if (definition.meta) tool["_meta"] = *definition.meta;
  return tool;
}

Json ToolResultToJson(ToolResult&& result) {
  if (result.input_required) {
    return InputRequiredResult(std::move(result.input_required->requests),
                               result.input_required->state);
  }
  Json out = Json::object();
  out["content"] = std::move(result.content);
  if (result.structured_content) out["structuredContent"] = std::move(*result.structured_content);
  out["isError"] = result.is_error;
  return out;
}

}  // namespace imgmcp::mcp
