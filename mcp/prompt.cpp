#include "mcp/prompt.h"

#include <algorithm>
#include <utility>

#include "mcp/pagination.h"

namespace imgmcp::mcp {

namespace {
constexpr char kPromptCursorKind[] = "prompts";

Json PromptToJson(const PromptDefinition& d) {
  Json prompt = Json::object();
  prompt["name"] = d.name;
  if (!d.title.empty()) prompt["title"] = d.title;
  if (!d.description.empty()) prompt["description"] = d.description;
  if (!d.arguments.empty()) {
    Json args = Json::array();
    for (const PromptArgument& a : d.arguments) {
      Json arg = Json::object();
      arg["name"] = a.name;
      if (!a.description.empty()) arg["description"] = a.description;
      arg["required"] = a.required;
      args.push_back(std::move(arg));
    }
    prompt["arguments"] = std::move(args);
  }
  return prompt;
}
}  // namespace

Status PromptRegistry::Register(PromptDefinition definition, PromptHandler handler) {
  if (definition.name.empty() || by_name_.count(definition.name) || !handler) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "invalid, duplicate or handler-less prompt: " + definition.name);
  }
  auto entry = std::make_unique<Entry>();
  entry->definition = std::move(definition);
  entry->handler = std::move(handler);
  by_name_.emplace(entry->definition.name, entry.get());
  order_.push_back(std::move(entry));
  return Status::Ok();
}

Result<PromptPage> PromptRegistry::List(const std::optional<std::string>& cursor,
                                        size_t page_size) const {
  auto window = PageOf(kPromptCursorKind, cursor, order_.size(), page_size);
  if (!window.ok()) return window.error();
  PromptPage page;
  for (size_t i = window->begin; i < window->end; ++i) {
    page.prompts.push_back(PromptToJson(order_[i]->definition));
  }
  page.next_cursor = window->next_cursor;
  return page;
}

Result<PromptAnswer> PromptRegistry::Get(const std::string& name, const PromptCall& call) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return MakeError(ErrorCode::kNotFound, "Unknown prompt: " + name);
  const Entry& entry = *it->second;
  const Json& arguments = call.arguments;
  if (!arguments.is_object()) {
    return MakeError(ErrorCode::kInvalidArgument, "arguments must be an object");
  }
  for (const auto& [key, value] : arguments.items()) {
    if (!value.is_string()) {
      return MakeError(ErrorCode::kInvalidArgument, "argument " + key + " must be a string");
    }
  }
  for (const PromptArgument& a : entry.definition.arguments) {
    if (a.required && !arguments.contains(a.name)) {
      return MakeError(ErrorCode::kInvalidArgument, "missing required argument: " + a.name);
    }
  }
  return entry.handler(call);
}

}  // namespace imgmcp::mcp
