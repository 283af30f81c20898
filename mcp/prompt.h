// Prompts and completions as the protocol core sees them: a simple registry, enough for the
// conformance fixtures and for any prompt the tools layer wants to offer.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/json.h"
#include "common/result.h"
#include "mcp/tool.h"

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

// What prompts/get hands a prompt's handler.
struct PromptCall {
  Json arguments = Json::object();  // string values, required ones already checked
  InputResponses inputs;            // an MRTR retry's inputResponses and (verified) requestState
  Json client_capabilities = Json::object();
  bool modern = false;  // a 2026-07-28 request: it may be answered input_required
};

// A prompt's answer: the prompts/get result ({description?, messages:[{role, content}]}), or
// (modern requests only) the input it needs first.
struct PromptAnswer {
  Json result = Json::object();
  std::optional<InputRequest> input_required;
  PromptAnswer() = default;
  PromptAnswer(Json messages_result) : result(std::move(messages_result)) {}  // NOLINT: implicit
};

// kInvalidArgument → -32602.
using PromptHandler = std::function<Result<PromptAnswer>(const PromptCall& call)>;

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
  // a missing required argument or a non-string value (call.arguments).
  Result<PromptAnswer> Get(const std::string& name, const PromptCall& call) const;

 private:
  struct Entry {
    PromptDefinition definition;
    PromptHandler handler;
  };
  std::vector<std::unique_ptr<Entry>> order_;
  std::map<std::string, const Entry*, std::less<>> by_name_;
};

}  // namespace imgmcp::mcp
