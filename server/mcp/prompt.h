// Prompts and completions as the protocol core sees them: a simple registry, enough for the
// conformance fixtures and for any prompt the tools layer wants to offer.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/result.h"

namespace imgmcp::mcp {

struct PromptArgument {
  std::string name;
  std::string description;
  bool required = false;
};

struct PromptDefinition {
  std::string name;
  std::string title;
  std::string description;
  std::vector<PromptArgument> arguments;
};

// Gets the prompt's arguments (string values, already checked for required ones) and returns the
// prompts/get result: {description?, messages:[{role, content}]}. kInvalidArgument → -32602.
using PromptHandler = std::function<Result<Json>(const Json& arguments)>;

// completion/complete: gets the request params ({ref, argument, context?}) and returns the
// `completion` object {values:[...], total?, hasMore?}.
using CompletionHandler = std::function<Result<Json>(const Json& params)>;

struct PromptPage {
  Json prompts = Json::array();
  std::optional<std::string> next_cursor;
};

// Registered at start-up, read-only afterwards (no lock, like ToolRegistry).
class PromptRegistry {
 public:
  Status Register(PromptDefinition definition, PromptHandler handler);
  bool empty() const { return order_.empty(); }
  Result<PromptPage> List(const std::optional<std::string>& cursor, size_t page_size) const;
  // prompts/get: kNotFound for an unknown name (→ -32602 "Unknown prompt"), kInvalidArgument for
  // a missing required argument or a non-string value.
  Result<Json> Get(const std::string& name, const Json& arguments) const;

 private:
  struct Entry {
    PromptDefinition definition;
    PromptHandler handler;
  };
  std::vector<std::unique_ptr<Entry>> order_;
  std::map<std::string, const Entry*, std::less<>> by_name_;
};

}  // namespace imgmcp::mcp
