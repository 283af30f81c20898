#include "server/tools/conformance_fixtures.h"

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/cancellation.h"

namespace imgmcp::tools {

namespace {

using mcp::LogLevel;
using mcp::ToolCallContext;
using mcp::ToolDefinition;
using mcp::ToolResult;

// 1×1 red PNG and a minimal WAV, as in the reference server.
constexpr char kTestImageBase64[] =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg"
    "==";
constexpr char kTestAudioBase64[] = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";
constexpr auto kStepDelay = std::chrono::milliseconds(50);

Json EmptyObjectSchema() { return Json{{"type", "object"}, {"properties", Json::object()}}; }

Json StringArgSchema(const std::string& name, const std::string& description) {
  return Json{{"type", "object"},
              {"properties", {{name, {{"type", "string"}, {"description", description}}}}},
              {"required", {name}}};
}

ToolDefinition Tool(std::string name, std::string description, Json schema = EmptyObjectSchema()) {
  ToolDefinition d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.input_schema = std::move(schema);
  return d;
}

ToolResult Blocks(Json content) {
  ToolResult r;
  r.content = std::move(content);
  return r;
}

Json ImageBlock() {
  return Json{{"type", "image"}, {"data", kTestImageBase64}, {"mimeType", "image/png"}};
}

// The reference server's 50 ms pauses, cut short by cancellation. False when cancelled.
bool PauseUnlessCancelled(ToolCallContext& ctx, std::chrono::milliseconds total) {
  return SleepUnlessStopped(total, ctx.Cancellation());
}

// Reads a required string argument; nullopt (and an isError text in *error) when missing.
std::optional<std::string> StringArg(const Json& args, const std::string& name, ToolResult* error) {
  auto it = args.find(name);
  if (it == args.end() || !it->is_string()) {
    *error = ToolResult::ErrorText(name + " is required and must be a string");
    return std::nullopt;
  }
  return it->get<std::string>();
}

std::string TextOf(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Sends elicitation/create with `schema` and reports the outcome as the reference server does.
ToolResult Elicit(ToolCallContext& ctx, const std::string& message, Json schema,
                  const std::string& done_prefix) {
  auto answer = ctx.SendRequest(
      "elicitation/create",
      {{"mode", "form"}, {"message", message}, {"requestedSchema", std::move(schema)}});
  if (!answer.ok()) {
    return ToolResult::Text("Elicitation not supported or error: " + answer.error().message);
  }
  return ToolResult::Text(done_prefix + "action=" + TextOf(answer->value("action", Json(""))) +
                          ", content=" + answer->value("content", Json::object()).dump());
}

// --- multi round-trip (MRTR) fixtures: the input_required flows of 2026-07-28 -------------------

Json ElicitationRequest(const std::string& message, const std::string& field, const char* type) {
  Json schema = {
      {"type", "object"}, {"properties", {{field, {{"type", type}}}}}, {"required", {field}}};
  return {{"method", "elicitation/create"},
          {"params", {{"message", message}, {"requestedSchema", std::move(schema)}}}};
}

Json SamplingRequest(const std::string& text, int max_tokens) {
  Json message = {{"role", "user"}, {"content", {{"type", "text"}, {"text", text}}}};
  return {{"method", "sampling/createMessage"},
          {"params", {{"messages", Json::array({std::move(message)})}, {"maxTokens", max_tokens}}}};
}

Json RootsRequest() { return {{"method", "roots/list"}, {"params", Json::object()}}; }

ToolResult AskFor(Json requests, std::optional<std::string> state = std::nullopt) {
  ToolResult r;
  r.input_required = mcp::InputRequest{std::move(requests), std::move(state)};
  return r;
}

// The client's answer under `key` of an MRTR retry, when it is an object.
const Json* Answer(const mcp::InputResponses& inputs, const std::string& key) {
  if (!inputs.responses || !inputs.responses->is_object()) return nullptr;
  auto it = inputs.responses->find(key);
  return it != inputs.responses->end() && it->is_object() ? &*it : nullptr;
}

// An accepted elicitation's `field` (of JSON type `is`), or nullptr.
template <typename Pred>
const Json* Accepted(const mcp::InputResponses& inputs, const std::string& key,
                     const std::string& field, Pred is) {
  const Json* answer = Answer(inputs, key);
  if (answer == nullptr || answer->value("action", "") != "accept") return nullptr;
  auto content = answer->find("content");
  if (content == answer->end() || !content->is_object()) return nullptr;
  auto value = content->find(field);
  return value != content->end() && is(*value) ? &*value : nullptr;
}

const Json* AcceptedString(const mcp::InputResponses& inputs, const std::string& key,
                           const std::string& field) {
  return Accepted(inputs, key, field, [](const Json& v) { return v.is_string(); });
}

// A sampling answer's text, or nullptr.
const Json* SampledText(const mcp::InputResponses& inputs, const std::string& key) {
  const Json* answer = Answer(inputs, key);
  if (answer == nullptr) return nullptr;
  auto content = answer->find("content");
  if (content == answer->end() || !content->is_object()) return nullptr;
  auto text = content->find("text");
  return text != content->end() && text->is_string() ? &*text : nullptr;
}

// A roots/list answer's roots, or nullptr.
const Json* ListedRoots(const mcp::InputResponses& inputs, const std::string& key) {
  const Json* answer = Answer(inputs, key);
  if (answer == nullptr) return nullptr;
  auto roots = answer->find("roots");
  return roots != answer->end() && roots->is_array() ? &*roots : nullptr;
}

bool StateIs(const mcp::InputResponses& inputs, std::string_view expected) {
  return inputs.request_state && *inputs.request_state == expected;
}

std::vector<std::pair<ToolDefinition, mcp::ToolHandler>> InputRequiredTools() {
  return {
      {Tool("test_input_required_result_elicitation",
            "Asks for the user's name with an input_required elicitation (SEP-2322)"),
       [](const Json&, ToolCallContext& ctx) {
         const Json* name = AcceptedString(ctx.Inputs(), "user_name", "name");
         if (name == nullptr) {
           return AskFor(
               {{"user_name", ElicitationRequest("What is your name?", "name", "string")}});
         }
         return ToolResult::Text("Hello, " + name->get<std::string>() + "!");
       }},
      {Tool("test_input_required_result_sampling",
            "Asks the client's LLM a question with an input_required sampling request"),
       [](const Json&, ToolCallContext& ctx) {
         const Json* text = SampledText(ctx.Inputs(), "capital_question");
         if (text == nullptr) {
           return AskFor(
               {{"capital_question", SamplingRequest("What is the capital of France?", 100)}});
         }
         return ToolResult::Text("LLM response: " + text->get<std::string>());
       }},
      {Tool("test_input_required_result_list_roots",
            "Asks for the client's roots with an input_required roots/list request"),
       [](const Json&, ToolCallContext& ctx) {
         const Json* roots = ListedRoots(ctx.Inputs(), "client_roots");
         if (roots == nullptr) return AskFor({{"client_roots", RootsRequest()}});
         return ToolResult::Text("Found " + std::to_string(roots->size()) + " root(s)");
       }},
      {Tool("test_input_required_result_request_state",
            "Asks for a confirmation and carries requestState to the retry"),
       [](const Json&, ToolCallContext& ctx) {
         constexpr char kState[] = "awaiting-confirmation";
         const Json* ok =
             Accepted(ctx.Inputs(), "confirm", "ok", [](const Json& v) { return v.is_boolean(); });
         if (ok == nullptr || !StateIs(ctx.Inputs(), kState)) {
           return AskFor({{"confirm", ElicitationRequest("Please confirm", "ok", "boolean")}},
                         kState);
         }
         return ToolResult::Text(std::string("state-ok: confirmed=") +
                                 (ok->get<bool>() ? "true" : "false"));
       }},
      {Tool("test_input_required_result_multiple_inputs",
            "Asks for an elicitation, a sampling and the roots in one input_required result"),
       [](const Json&, ToolCallContext& ctx) {
         constexpr char kState[] = "awaiting-three-inputs";
         const mcp::InputResponses& in = ctx.Inputs();
         const Json* name = AcceptedString(in, "user_name", "name");
         const Json* greeting = SampledText(in, "greeting");
         const Json* roots = ListedRoots(in, "client_roots");
         if (name == nullptr || greeting == nullptr || roots == nullptr || !StateIs(in, kState)) {
           return AskFor({{"user_name", ElicitationRequest("What is your name?", "name", "string")},
                          {"greeting", SamplingRequest("Generate a greeting", 50)},
                          {"client_roots", RootsRequest()}},
                         kState);
         }
         return ToolResult::Text(greeting->get<std::string>() + " " + name->get<std::string>() +
                                 " (" + std::to_string(roots->size()) + " root(s))");
       }},
      {Tool("test_input_required_result_multi_round",
            "Asks for a name, then a colour, in two input_required rounds"),
       [](const Json&, ToolCallContext& ctx) {
         // The state carries round 1's answer into round 3; the core seals it.
         const mcp::InputResponses& in = ctx.Inputs();
         constexpr std::string_view kRound2 = "round-2:";
         if (StateIs(in, "round-1")) {
           if (const Json* name = AcceptedString(in, "step1", "name")) {
             return AskFor({{"step2", ElicitationRequest("Step 2: What is your favorite color?",
                                                         "color", "string")}},
                           std::string(kRound2) + name->get<std::string>());
           }
         } else if (in.request_state && in.request_state->rfind(kRound2, 0) == 0) {
           if (const Json* color = AcceptedString(in, "step2", "color")) {
             return ToolResult::Text(in.request_state->substr(kRound2.size()) + " likes " +
                                     color->get<std::string>());
           }
         }
         return AskFor(
             {{"step1", ElicitationRequest("Step 1: What is your name?", "name", "string")}},
             "round-1");
       }},
      {Tool("test_input_required_result_tampered_state",
            "Carries requestState to the retry; an altered state is refused before the tool runs"),
       [](const Json&, ToolCallContext& ctx) {
         constexpr char kState[] = "approved-scope:read";
         const Json* ok =
             Accepted(ctx.Inputs(), "confirm", "ok", [](const Json& v) { return v.is_boolean(); });
         if (ok == nullptr || !StateIs(ctx.Inputs(), kState)) {
           return AskFor({{"confirm", ElicitationRequest("Please confirm", "ok", "boolean")}},
                         kState);
         }
         return ToolResult::Text("state verified: " + std::string(kState));
       }},
      {Tool("test_input_required_result_capabilities",
            "Asks only for the kinds of input the client declared it can give"),
       [](const Json&, ToolCallContext& ctx) {
         const mcp::InputResponses& in = ctx.Inputs();
         const Json& caps = ctx.ClientCapabilities();
         if (AcceptedString(in, "user_name", "name") || SampledText(in, "question") ||
             ListedRoots(in, "client_roots")) {
           return ToolResult::Text("Input received");
         }
         Json requests = Json::object();
         if (caps.contains("elicitation")) {
           requests["user_name"] = ElicitationRequest("What is your name?", "name", "string");
         }
         if (caps.contains("sampling")) requests["question"] = SamplingRequest("Say hello", 20);
         if (caps.contains("roots")) requests["client_roots"] = RootsRequest();
         if (requests.empty()) {
           return ToolResult::Text("The client declared no capability to give input with");
         }
         return AskFor(std::move(requests));
       }},
  };
}

// --- diagnostic tools of the 2026-07-28 server-stateless scenario ------------------------------

std::vector<std::pair<ToolDefinition, mcp::ToolHandler>> StatelessTools(mcp::McpServer& server) {
  ToolDefinition needs_sampling =
      Tool("test_missing_capability", "Needs the sampling client capability (-32021 without it)");
  needs_sampling.required_client_capabilities = Json{{"sampling", Json::object()}};
  return {
      {std::move(needs_sampling),
       [](const Json&, ToolCallContext&) { return ToolResult::Text("Success"); }},
      {Tool("test_streaming_elicitation",
            "Streams progress on its own response, never a request of its own"),
       [](const Json&, ToolCallContext& ctx) {
         ctx.ReportProgress(1, 1, "Streaming");
         return ToolResult::Text("Streaming complete");
       }},
      {Tool("test_logging_tool", "Logs only when the request asked for logs (its logLevel)"),
       [](const Json&, ToolCallContext& ctx) {
         ctx.Log(LogLevel::kInfo, "", "test_logging_tool ran");
         return ToolResult::Text("Logging evaluated");
       }},
      {Tool("test_trigger_tool_change",
            "Tells subscriptions/listen streams that asked for it that the tool list changed"),
       [&server](const Json&, ToolCallContext&) {
         server.NotifyListChanged(mcp::ListKind::kTools);
         return ToolResult::Text("Mutation triggered");
       }},
      {Tool("test_trigger_prompt_change",
            "Tells subscriptions/listen streams that asked for it that the prompt list changed"),
       [&server](const Json&, ToolCallContext&) {
         server.NotifyListChanged(mcp::ListKind::kPrompts);
         return ToolResult::Text("Mutation triggered");
       }},
  };
}

Status RegisterTools(mcp::McpServer& server) {
  const std::pair<ToolDefinition, mcp::ToolHandler> tools[] = {
      {Tool("test_simple_text", "Tests simple text content response"),
       [](const Json&, ToolCallContext&) {
         return ToolResult::Text("This is a simple text response for testing.");
       }},
      {Tool("test_image_content", "Tests image content response"),
       [](const Json&, ToolCallContext&) { return Blocks(Json::array({ImageBlock()})); }},
      {Tool("test_audio_content", "Tests audio content response"),
       [](const Json&, ToolCallContext&) {
         return Blocks(Json::array(
             {{{"type", "audio"}, {"data", kTestAudioBase64}, {"mimeType", "audio/wav"}}}));
       }},
      {Tool("test_embedded_resource", "Tests embedded resource content response"),
       [](const Json&, ToolCallContext&) {
         return Blocks(Json::array({{{"type", "resource"},
                                     {"resource",
                                      {{"uri", "test://embedded-resource"},
                                       {"mimeType", "text/plain"},
                                       {"text", "This is an embedded resource content."}}}}}));
       }},
      {Tool("test_multiple_content_types",
            "Tests response with multiple content types (text, image, resource)"),
       [](const Json&, ToolCallContext&) {
         return Blocks(
             Json::array({{{"type", "text"}, {"text", "Multiple content types test:"}},
                          ImageBlock(),
                          {{"type", "resource"},
                           {"resource",
                            {{"uri", "test://mixed-content-resource"},
                             {"mimeType", "application/json"},
                             {"text", Json{{"test", "data"}, {"value", 123}}.dump()}}}}}));
       }},
      {Tool("test_tool_with_logging", "Tests tool that emits log messages during execution"),
       [](const Json&, ToolCallContext& ctx) {
         ctx.Log(LogLevel::kInfo, "", "Tool execution started");
         if (!PauseUnlessCancelled(ctx, kStepDelay)) return ToolResult::ErrorText("cancelled");
         ctx.Log(LogLevel::kInfo, "", "Tool processing data");
         if (!PauseUnlessCancelled(ctx, kStepDelay)) return ToolResult::ErrorText("cancelled");
         ctx.Log(LogLevel::kInfo, "", "Tool execution completed");
         return ToolResult::Text("Tool with logging executed successfully");
       }},
      {Tool("test_tool_with_progress", "Tests tool that reports progress notifications"),
       [](const Json&, ToolCallContext& ctx) {
         for (int step : {0, 50, 100}) {
           if (step > 0 && !PauseUnlessCancelled(ctx, kStepDelay)) {
             return ToolResult::ErrorText("cancelled");
           }
           ctx.ReportProgress(step, 100, "Completed step " + std::to_string(step) + " of 100");
         }
         // One more step's pause before answering. The TypeScript SDK client handles a
         // notification a microtask after the read that brought it but a response at once, so a
         // final progress notification read together with the response is dropped
         // (modelcontextprotocol/typescript-sdk#2580); the pause keeps "100 of 100" visible.
         if (!PauseUnlessCancelled(ctx, kStepDelay)) return ToolResult::ErrorText("cancelled");
         return ToolResult::Text(TextOf(ctx.ProgressToken().value_or(Json(0))));
       }},
      {Tool("test_error_handling", "Tests error response handling"),
       [](const Json&, ToolCallContext&) {
         return ToolResult::ErrorText("This tool intentionally returns an error for testing");
       }},
      {Tool("test_reconnection",
            "Tests SSE stream disconnection and client reconnection (SEP-1699). Server will "
            "close the stream mid-call and send the result after client reconnects."),
       [](const Json&, ToolCallContext& ctx) {
         // Like the reference server: close the call's SSE stream mid-call (SEP-1699 polling);
         // the client reconnects with Last-Event-ID and receives the result.
         ctx.CloseStream();
         if (!PauseUnlessCancelled(ctx, 2 * kStepDelay)) return ToolResult::ErrorText("cancelled");
         return ToolResult::Text(
             "Reconnection test completed successfully. If you received this, the client "
             "properly reconnected after stream closure.");
       }},
      {Tool("test_sampling", "Tests server-initiated sampling (LLM completion request)",
            StringArgSchema("prompt", "The prompt to send to the LLM")),
       [](const Json& args, ToolCallContext& ctx) {
         ToolResult error;
         auto prompt = StringArg(args, "prompt", &error);
         if (!prompt) return error;
         Json message = {{"role", "user"}, {"content", {{"type", "text"}, {"text", *prompt}}}};
         auto answer = ctx.SendRequest("sampling/createMessage",
                                       {{"messages", Json::array({message})}, {"maxTokens", 100}});
         if (!answer.ok()) {
           return ToolResult::Text("Sampling not supported or error: " + answer.error().message);
         }
         std::string text = "No response";
         const Json& content = answer->value("content", Json::object());
         if (content.is_object() && content.contains("text")) text = TextOf(content["text"]);
         return ToolResult::Text("LLM response: " + text);
       }},
      {Tool("test_elicitation", "Tests server-initiated elicitation (user input request)",
            StringArgSchema("message", "The message to show the user")),
       [](const Json& args, ToolCallContext& ctx) {
         ToolResult error;
         auto message = StringArg(args, "message", &error);
         if (!message) return error;
         Json schema = {{"type", "object"},
                        {"properties",
                         {{"response", {{"type", "string"}, {"description", "User's response"}}}}},
                        {"required", {"response"}}};
         return Elicit(ctx, *message, std::move(schema), "User response: ");
       }},
      {Tool("test_elicitation_sep1034_defaults",
            "Tests elicitation with default values per SEP-1034"),
       [](const Json&, ToolCallContext& ctx) {
         Json schema = {
             {"type", "object"},
             {"properties",
              {{"name",
                {{"type", "string"}, {"description", "User name"}, {"default", "John Doe"}}},
               {"age", {{"type", "integer"}, {"description", "User age"}, {"default", 30}}},
               {"score", {{"type", "number"}, {"description", "User score"}, {"default", 95.5}}},
               {"status",
                {{"type", "string"},
                 {"description", "User status"},
                 {"enum", {"active", "inactive", "pending"}},
                 {"default", "active"}}},
               {"verified",
                {{"type", "boolean"}, {"description", "Verification status"}, {"default", true}}}}},
             {"required", Json::array()}};
         return Elicit(ctx, "Please review and update the form fields with defaults",
                       std::move(schema), "Elicitation completed: ");
       }},
      {Tool("test_elicitation_sep1330_enums",
            "Tests elicitation with enum schema improvements per SEP-1330"),
       [](const Json&, ToolCallContext& ctx) {
         auto titled = [](const char* prefix, const char* word) {
           Json options = Json::array();
           const char* names[] = {"First", "Second", "Third"};
           for (int i = 0; i < 3; ++i) {
             options.push_back({{"const", prefix + std::to_string(i + 1)},
                                {"title", std::string(names[i]) + " " + word}});
           }
           return options;
         };
         Json schema = {
             {"type", "object"},
             {"properties",
              {{"untitledSingle",
                {{"type", "string"},
                 {"description", "Select one option"},
                 {"enum", {"option1", "option2", "option3"}}}},
               {"titledSingle",
                {{"type", "string"},
                 {"description", "Select one option with titles"},
                 {"oneOf", titled("value", "Option")}}},
               {"legacyEnum",
                {{"type", "string"},
                 {"description", "Select one option (legacy)"},
                 {"enum", {"opt1", "opt2", "opt3"}},
                 {"enumNames", {"Option One", "Option Two", "Option Three"}}}},
               {"untitledMulti",
                {{"type", "array"},
                 {"description", "Select multiple options"},
                 {"minItems", 1},
                 {"maxItems", 3},
                 {"items", {{"type", "string"}, {"enum", {"option1", "option2", "option3"}}}}}},
               {"titledMulti",
                {{"type", "array"},
                 {"description", "Select multiple options with titles"},
                 {"minItems", 1},
                 {"maxItems", 3},
                 {"items", {{"anyOf", titled("value", "Choice")}}}}}}},
             {"required", Json::array()}};
         return Elicit(ctx, "Please select options from the enum fields", std::move(schema),
                       "Elicitation completed: ");
       }},
      {Tool("json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
            // SEP-1613's keywords, and SEP-2106's $anchor, allOf/anyOf and if/then/else.
            Json{{"$schema", "https://json-schema.org/draft/2020-12/schema"},
                 {"type", "object"},
                 {"$defs",
                  {{"address",
                    {{"$anchor", "addressDef"},
                     {"type", "object"},
                     {"properties",
                      {{"street", {{"type", "string"}}}, {"city", {{"type", "string"}}}}}}}}},
                 {"properties",
                  {{"name", {{"type", "string"}}},
                   {"address", {{"$ref", "#/$defs/address"}}},
                   {"contactMethod", {{"type", "string"}, {"enum", {"phone", "email"}}}},
                   {"phone", {{"type", "string"}}},
                   {"email", {{"type", "string"}}}}},
                 {"allOf", Json::array({{{"anyOf", Json::array({{{"required", {"phone"}}},
                                                                {{"required", {"email"}}}})}}})},
                 {"if",
                  {{"properties", {{"contactMethod", {{"const", "phone"}}}}},
                   {"required", {"contactMethod"}}}},
                 {"then", {{"required", {"phone"}}}},
                 {"else", {{"required", {"email"}}}},
                 {"additionalProperties", false}}),
       [](const Json& args, ToolCallContext&) {
         return ToolResult::Text("JSON Schema 2020-12 tool called with: " + args.dump());
       }},
  };
  for (const auto& [definition, handler] : tools) {
    RETURN_IF_ERROR(server.RegisterTool(definition, handler));
  }
  for (auto& group : {InputRequiredTools(), StatelessTools(server)}) {
    for (const auto& [definition, handler] : group) {
      RETURN_IF_ERROR(server.RegisterTool(definition, handler));
    }
  }
  return Status::Ok();
}

// test://static-text, test://static-binary, test://watched-resource and the
// test://template/{id}/data template.
class TestResources final : public mcp::ResourceProvider {
 public:
  Result<mcp::ResourcePage> List(const std::optional<std::string>& cursor) override {
    if (cursor) return MakeError(ErrorCode::kInvalidArgument, "Invalid cursor");
    mcp::ResourcePage page;
    page.resources =
        Json::array({Entry("test://static-text", "static-text", "Static Text Resource",
                           "A static text resource for testing", "text/plain"),
                     Entry("test://static-binary", "static-binary", "Static Binary Resource",
                           "A static binary resource (image) for testing", "image/png"),
                     Entry("test://watched-resource", "watched-resource", "Watched Resource",
                           "A resource that auto-updates every 3 seconds", "text/plain")});
    return page;
  }

  Json Templates() override {
    return Json::array({{{"uriTemplate", "test://template/{id}/data"},
                         {"name", "template"},
                         {"title", "Resource Template"},
                         {"description", "A resource template with parameter substitution"},
                         {"mimeType", "application/json"}}});
  }

  bool Handles(const std::string& uri) const override { return uri.rfind("test://", 0) == 0; }

  Result<Json> Read(const std::string& uri) override {
    if (uri == "test://static-text") {
      return Contents(uri, "text/plain", "text",
                      "This is the content of the static text resource.");
    }
    if (uri == "test://static-binary") return Contents(uri, "image/png", "blob", kTestImageBase64);
    if (uri == "test://watched-resource") {
      return Contents(uri, "text/plain", "text", "Watched resource content");
    }
    const std::string prefix = "test://template/", suffix = "/data";
    if (uri.size() > prefix.size() + suffix.size() && uri.rfind(prefix, 0) == 0 &&
        uri.compare(uri.size() - suffix.size(), suffix.size(), suffix) == 0) {
      const std::string id = uri.substr(prefix.size(), uri.size() - prefix.size() - suffix.size());
      if (id.find('/') == std::string::npos) {
        Json data = {{"id", id}, {"templateTest", true}, {"data", "Data for ID: " + id}};
        return Contents(uri, "application/json", "text", data.dump());
      }
    }
    return MakeError(ErrorCode::kNotFound, "Resource not found: " + uri);
  }

 private:
  static Json Entry(const char* uri, const char* name, const char* title, const char* description,
                    const char* mime) {
    return {{"uri", uri},
            {"name", name},
            {"title", title},
            {"description", description},
            {"mimeType", mime}};
  }
  static Json Contents(const std::string& uri, const char* mime, const char* kind,
                       const std::string& value) {
    return {{"contents", Json::array({{{"uri", uri}, {"mimeType", mime}, {kind, value}}})}};
  }
};

Json UserMessage(Json content) { return {{"role", "user"}, {"content", std::move(content)}}; }
Json TextContent(const std::string& text) { return {{"type", "text"}, {"text", text}}; }

Status RegisterPrompts(mcp::McpServer& server) {
  using mcp::PromptDefinition;
  Status s = server.RegisterPrompt(
      PromptDefinition{
          "test_simple_prompt", "Simple Test Prompt", "A simple prompt without arguments", {}},
      [](const mcp::PromptCall&) -> mcp::PromptAnswer {
        return Json{
            {"messages",
             Json::array({UserMessage(TextContent("This is a simple prompt for testing."))})}};
      });
  if (!s.ok()) return s;
  s = server.RegisterPrompt(
      PromptDefinition{
          "test_prompt_with_arguments",
          "Prompt With Arguments",
          "A prompt with required arguments",
          {{"arg1", "First test argument", true}, {"arg2", "Second test argument", true}}},
      [](const mcp::PromptCall& call) -> mcp::PromptAnswer {
        const Json& args = call.arguments;
        const std::string text = "Prompt with arguments: arg1='" + args.value("arg1", "") +
                                 "', arg2='" + args.value("arg2", "") + "'";
        return Json{{"messages", Json::array({UserMessage(TextContent(text))})}};
      });
  if (!s.ok()) return s;
  s = server.RegisterPrompt(
      PromptDefinition{"test_prompt_with_embedded_resource",
                       "Prompt With Embedded Resource",
                       "A prompt that includes an embedded resource",
                       {{"resourceUri", "URI of the resource to embed", true}}},
      [](const mcp::PromptCall& call) -> mcp::PromptAnswer {
        const Json& args = call.arguments;
        Json resource = {{"type", "resource"},
                         {"resource",
                          {{"uri", args.value("resourceUri", "")},
                           {"mimeType", "text/plain"},
                           {"text", "Embedded resource content for testing."}}}};
        return Json{
            {"messages", Json::array({UserMessage(std::move(resource)),
                                      UserMessage(TextContent(
                                          "Please process the embedded resource above."))})}};
      });
  if (!s.ok()) return s;
  s = server.RegisterPrompt(
      PromptDefinition{"test_input_required_result_prompt",
                       "Prompt Needing Input",
                       "Asks for its context with an input_required elicitation (SEP-2322)",
                       {}},
      [](const mcp::PromptCall& call) -> Result<mcp::PromptAnswer> {
        const Json* context = AcceptedString(call.inputs, "user_context", "context");
        if (context == nullptr) {
          mcp::PromptAnswer ask;
          ask.input_required = mcp::InputRequest{
              {{"user_context",
                ElicitationRequest("What context should the prompt use?", "context", "string")}},
              std::nullopt};
          return ask;
        }
        const std::string text = "Use this context: " + context->get<std::string>();
        return mcp::PromptAnswer(Json{{"messages", Json::array({UserMessage(TextContent(text))})}});
      });
  if (!s.ok()) return s;
  return server.RegisterPrompt(
      PromptDefinition{"test_prompt_with_image",
                       "Prompt With Image",
                       "A prompt that includes image content",
                       {}},
      [](const mcp::PromptCall&) -> mcp::PromptAnswer {
        return Json{{"messages",
                     Json::array({UserMessage(ImageBlock()),
                                  UserMessage(TextContent("Please analyze the image above."))})}};
      });
}

}  // namespace

Status RegisterConformanceFixtures(mcp::McpServer& server) {
  Status s = RegisterTools(server);
  if (!s.ok()) return s;
  s = RegisterPrompts(server);
  if (!s.ok()) return s;
  server.AddResourceProvider(std::make_shared<TestResources>());
  // Like the reference server: a valid, empty completion for any reference.
  server.SetCompletionHandler([](const Json&) -> Result<Json> {
    return Json{{"values", Json::array()}, {"total", 0}, {"hasMore", false}};
  });
  return Status::Ok();
}

}  // namespace imgmcp::tools
