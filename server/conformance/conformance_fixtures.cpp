#include "server/conformance/conformance_fixtures.h"

#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/cancellation.h"
#include "server/conformance/fixture_requests.h"
#include "server/conformance/task_fixtures.h"

namespace imgmcp::conformance {

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

// A fixture tool as the reference server has it: name, description, input schema, behaviour.
struct ToolFixture {
  const char* name;
  const char* description;
  ToolResult (*run)(const Json& args, ToolCallContext& ctx);
  Json (*schema)() = EmptyObjectSchema;
};

Status RegisterTable(mcp::McpServer& server, std::span<const ToolFixture> fixtures) {
  for (const ToolFixture& f : fixtures) {
    RETURN_IF_ERROR(server.RegisterTool(Tool(f.name, f.description, f.schema()), f.run));
  }
  return Status::Ok();
}

// --- content, logging and progress --------------------------------------------------------------

ToolResult SimpleText(const Json&, ToolCallContext&) {
  return ToolResult::Text("This is a simple text response for testing.");
}

ToolResult ImageContent(const Json&, ToolCallContext&) {
  return Blocks(Json::array({ImageBlock()}));
}

ToolResult AudioContent(const Json&, ToolCallContext&) {
  return Blocks(
      Json::array({{{"type", "audio"}, {"data", kTestAudioBase64}, {"mimeType", "audio/wav"}}}));
}

ToolResult EmbeddedResource(const Json&, ToolCallContext&) {
  return Blocks(Json::array({{{"type", "resource"},
                              {"resource",
                               {{"uri", "test://embedded-resource"},
                                {"mimeType", "text/plain"},
                                {"text", "This is an embedded resource content."}}}}}));
}

ToolResult MultipleContentTypes(const Json&, ToolCallContext&) {
  return Blocks(Json::array({{{"type", "text"}, {"text", "Multiple content types test:"}},
                             ImageBlock(),
                             {{"type", "resource"},
                              {"resource",
                               {{"uri", "test://mixed-content-resource"},
                                {"mimeType", "application/json"},
                                {"text", Json{{"test", "data"}, {"value", 123}}.dump()}}}}}));
}

ToolResult ErrorHandling(const Json&, ToolCallContext&) {
  return ToolResult::ErrorText("This tool intentionally returns an error for testing");
}

ToolResult ToolWithLogging(const Json&, ToolCallContext& ctx) {
  ctx.Log(LogLevel::kInfo, "", "Tool execution started");
  if (!PauseUnlessCancelled(ctx, kStepDelay)) return ToolResult::ErrorText("cancelled");
  ctx.Log(LogLevel::kInfo, "", "Tool processing data");
  if (!PauseUnlessCancelled(ctx, kStepDelay)) return ToolResult::ErrorText("cancelled");
  ctx.Log(LogLevel::kInfo, "", "Tool execution completed");
  return ToolResult::Text("Tool with logging executed successfully");
}

ToolResult ToolWithProgress(const Json&, ToolCallContext& ctx) {
  for (int step : {0, 50, 100}) {
    if (step > 0 && !PauseUnlessCancelled(ctx, kStepDelay)) {
      return ToolResult::ErrorText("cancelled");
    }
    ctx.ReportProgress(step, 100, "Completed step " + std::to_string(step) + " of 100");
  }
  // One more step's pause before answering. The TypeScript SDK client handles a notification a
  // microtask after the read that brought it but a response at once, so a final progress
  // notification read together with the response is dropped
  // (modelcontextprotocol/typescript-sdk#2580); the pause keeps "100 of 100" visible.
  if (!PauseUnlessCancelled(ctx, kStepDelay)) return ToolResult::ErrorText("cancelled");
  return ToolResult::Text(TextOf(ctx.ProgressToken().value_or(Json(0))));
}

ToolResult Reconnection(const Json&, ToolCallContext& ctx) {
  // Like the reference server: close the call's SSE stream mid-call (SEP-1699 polling); the
  // client reconnects with Last-Event-ID and receives the result.
  ctx.CloseStream();
  if (!PauseUnlessCancelled(ctx, 2 * kStepDelay)) return ToolResult::ErrorText("cancelled");
  return ToolResult::Text(
      "Reconnection test completed successfully. If you received this, the client "
      "properly reconnected after stream closure.");
}

// --- server-initiated sampling and elicitation --------------------------------------------------

Json PromptArgSchema() { return StringArgSchema("prompt", "The prompt to send to the LLM"); }

ToolResult Sampling(const Json& args, ToolCallContext& ctx) {
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
}

Json MessageArgSchema() { return StringArgSchema("message", "The message to show the user"); }

ToolResult Elicitation(const Json& args, ToolCallContext& ctx) {
  ToolResult error;
  auto message = StringArg(args, "message", &error);
  if (!message) return error;
  Json schema = {
      {"type", "object"},
      {"properties", {{"response", {{"type", "string"}, {"description", "User's response"}}}}},
      {"required", {"response"}}};
  return Elicit(ctx, *message, std::move(schema), "User response: ");
}

// SEP-1034: a default for each kind of field.
Json DefaultsSchema() {
  return {{"type", "object"},
          {"properties",
           {{"name", {{"type", "string"}, {"description", "User name"}, {"default", "John Doe"}}},
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
}

ToolResult ElicitationDefaults(const Json&, ToolCallContext& ctx) {
  return Elicit(ctx, "Please review and update the form fields with defaults", DefaultsSchema(),
                "Elicitation completed: ");
}

// [{const: "<prefix>1", title: "First <word>"}, … "Third <word>"].
Json TitledOptions(const char* prefix, const char* word) {
  Json options = Json::array();
  const char* names[] = {"First", "Second", "Third"};
  for (int i = 0; i < 3; ++i) {
    options.push_back(
        {{"const", prefix + std::to_string(i + 1)}, {"title", std::string(names[i]) + " " + word}});
  }
  return options;
}

// SEP-1330: untitled, titled and legacy single-choice enums, untitled and titled multi-choice.
Json EnumsSchema() {
  return {{"type", "object"},
          {"properties",
           {{"untitledSingle",
             {{"type", "string"},
              {"description", "Select one option"},
              {"enum", {"option1", "option2", "option3"}}}},
            {"titledSingle",
             {{"type", "string"},
              {"description", "Select one option with titles"},
              {"oneOf", TitledOptions("value", "Option")}}},
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
              {"items", {{"anyOf", TitledOptions("value", "Choice")}}}}}}},
          {"required", Json::array()}};
}

ToolResult ElicitationEnums(const Json&, ToolCallContext& ctx) {
  return Elicit(ctx, "Please select options from the enum fields", EnumsSchema(),
                "Elicitation completed: ");
}

// SEP-1613's keywords, and SEP-2106's $anchor, allOf/anyOf and if/then/else.
Json JsonSchema2020() {
  return {
      {"$schema", "https://json-schema.org/draft/2020-12/schema"},
      {"type", "object"},
      {"$defs",
       {{"address",
         {{"$anchor", "addressDef"},
          {"type", "object"},
          {"properties", {{"street", {{"type", "string"}}}, {"city", {{"type", "string"}}}}}}}}},
      {"properties",
       {{"name", {{"type", "string"}}},
        {"address", {{"$ref", "#/$defs/address"}}},
        {"contactMethod", {{"type", "string"}, {"enum", {"phone", "email"}}}},
        {"phone", {{"type", "string"}}},
        {"email", {{"type", "string"}}}}},
      {"allOf",
       Json::array(
           {{{"anyOf", Json::array({{{"required", {"phone"}}}, {{"required", {"email"}}}})}}})},
      {"if",
       {{"properties", {{"contactMethod", {{"const", "phone"}}}}},
        {"required", {"contactMethod"}}}},
      {"then", {{"required", {"phone"}}}},
      {"else", {{"required", {"email"}}}},
      {"additionalProperties", false}};
}

ToolResult JsonSchema2020Tool(const Json& args, ToolCallContext&) {
  return ToolResult::Text("JSON Schema 2020-12 tool called with: " + args.dump());
}

const ToolFixture kTools[] = {
    {"test_simple_text", "Tests simple text content response", SimpleText},
    {"test_image_content", "Tests image content response", ImageContent},
    {"test_audio_content", "Tests audio content response", AudioContent},
    {"test_embedded_resource", "Tests embedded resource content response", EmbeddedResource},
    {"test_multiple_content_types",
     "Tests response with multiple content types (text, image, resource)", MultipleContentTypes},
    {"test_tool_with_logging", "Tests tool that emits log messages during execution",
     ToolWithLogging},
    {"test_tool_with_progress", "Tests tool that reports progress notifications", ToolWithProgress},
    {"test_error_handling", "Tests error response handling", ErrorHandling},
    {"test_reconnection",
     "Tests SSE stream disconnection and client reconnection (SEP-1699). Server will close the "
     "stream mid-call and send the result after client reconnects.",
     Reconnection},
    {"test_sampling", "Tests server-initiated sampling (LLM completion request)", Sampling,
     PromptArgSchema},
    {"test_elicitation", "Tests server-initiated elicitation (user input request)", Elicitation,
     MessageArgSchema},
    {"test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034",
     ElicitationDefaults},
    {"test_elicitation_sep1330_enums",
     "Tests elicitation with enum schema improvements per SEP-1330", ElicitationEnums},
    {"json_schema_2020_12_tool",
     "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
     JsonSchema2020Tool, JsonSchema2020},
};

// --- multi round-trip (MRTR) fixtures: the input_required flows of 2026-07-28 -------------------

Json SamplingRequest(const std::string& text, int max_tokens) {
  Json message = {{"role", "user"}, {"content", {{"type", "text"}, {"text", text}}}};
  return {{"method", "sampling/createMessage"},
          {"params", {{"messages", Json::array({std::move(message)})}, {"maxTokens", max_tokens}}}};
}

Json RootsRequest() { return {{"method", "roots/list"}, {"params", Json::object()}}; }

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

ToolResult AskUserName(const Json&, ToolCallContext& ctx) {
  const Json* name = AcceptedString(ctx.Inputs(), "user_name", "name");
  if (name == nullptr) {
    return AskFor({{"user_name", ElicitationRequest("What is your name?", "name", "string")}});
  }
  return ToolResult::Text("Hello, " + name->get<std::string>() + "!");
}

ToolResult AskTheClientsModel(const Json&, ToolCallContext& ctx) {
  const Json* text = SampledText(ctx.Inputs(), "capital_question");
  if (text == nullptr) {
    return AskFor({{"capital_question", SamplingRequest("What is the capital of France?", 100)}});
  }
  return ToolResult::Text("LLM response: " + text->get<std::string>());
}

ToolResult AskForRoots(const Json&, ToolCallContext& ctx) {
  const Json* roots = ListedRoots(ctx.Inputs(), "client_roots");
  if (roots == nullptr) return AskFor({{"client_roots", RootsRequest()}});
  return ToolResult::Text("Found " + std::to_string(roots->size()) + " root(s)");
}

// The accepted boolean `ok` of the "confirm" elicitation, when the retry carries `state`.
const Json* ConfirmedIn(const mcp::InputResponses& inputs, std::string_view state) {
  const Json* ok = Accepted(inputs, "confirm", "ok", [](const Json& v) { return v.is_boolean(); });
  return ok != nullptr && StateIs(inputs, state) ? ok : nullptr;
}

ToolResult AskToConfirm(std::string state) {
  return AskFor({{"confirm", ElicitationRequest("Please confirm", "ok", "boolean")}},
                std::move(state));
}

ToolResult CarryRequestState(const Json&, ToolCallContext& ctx) {
  constexpr char kState[] = "awaiting-confirmation";
  const Json* ok = ConfirmedIn(ctx.Inputs(), kState);
  if (ok == nullptr) return AskToConfirm(kState);
  return ToolResult::Text(std::string("state-ok: confirmed=") +
                          (ok->get<bool>() ? "true" : "false"));
}

ToolResult AskForThreeInputs(const Json&, ToolCallContext& ctx) {
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
  return ToolResult::Text(greeting->get<std::string>() + " " + name->get<std::string>() + " (" +
                          std::to_string(roots->size()) + " root(s))");
}

ToolResult AskInTwoRounds(const Json&, ToolCallContext& ctx) {
  // The state carries round 1's answer into round 3; the core seals it.
  const mcp::InputResponses& in = ctx.Inputs();
  constexpr std::string_view kRound2 = "round-2:";
  if (StateIs(in, "round-1")) {
    if (const Json* name = AcceptedString(in, "step1", "name")) {
      return AskFor({{"step2", ElicitationRequest("Step 2: What is your favorite color?", "color",
                                                  "string")}},
                    std::string(kRound2) + name->get<std::string>());
    }
  } else if (in.request_state && in.request_state->rfind(kRound2, 0) == 0) {
    if (const Json* color = AcceptedString(in, "step2", "color")) {
      return ToolResult::Text(in.request_state->substr(kRound2.size()) + " likes " +
                              color->get<std::string>());
    }
  }
  return AskFor({{"step1", ElicitationRequest("Step 1: What is your name?", "name", "string")}},
                "round-1");
}

ToolResult CheckSealedState(const Json&, ToolCallContext& ctx) {
  constexpr char kState[] = "approved-scope:read";
  if (ConfirmedIn(ctx.Inputs(), kState) == nullptr) return AskToConfirm(kState);
  return ToolResult::Text("state verified: " + std::string(kState));
}

ToolResult AskWhatTheClientCanGive(const Json&, ToolCallContext& ctx) {
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
}

const ToolFixture kInputRequiredTools[] = {
    {"test_input_required_result_elicitation",
     "Asks for the user's name with an input_required elicitation (SEP-2322)", AskUserName},
    {"test_input_required_result_sampling",
     "Asks the client's LLM a question with an input_required sampling request",
     AskTheClientsModel},
    {"test_input_required_result_list_roots",
     "Asks for the client's roots with an input_required roots/list request", AskForRoots},
    {"test_input_required_result_request_state",
     "Asks for a confirmation and carries requestState to the retry", CarryRequestState},
    {"test_input_required_result_multiple_inputs",
     "Asks for an elicitation, a sampling and the roots in one input_required result",
     AskForThreeInputs},
    {"test_input_required_result_multi_round",
     "Asks for a name, then a colour, in two input_required rounds", AskInTwoRounds},
    {"test_input_required_result_tampered_state",
     "Carries requestState to the retry; an altered state is refused before the tool runs",
     CheckSealedState},
    {"test_input_required_result_capabilities",
     "Asks only for the kinds of input the client declared it can give", AskWhatTheClientCanGive},
};

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

// test://static-text, test://static-binary, test://watched-resource and the
// test://template/{id}/data template.
class TestResources final : public mcp::ResourceProvider {
 public:
  Result<mcp::ResourcePage> List(const mcp::Caller&,
                                 const std::optional<std::string>& cursor) override {
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

  Result<Json> Read(const mcp::Caller&, const std::string& uri) override {
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
    return mcp::ResourceNotFoundError(uri);
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

// --- prompts -------------------------------------------------------------------------------------

Json UserMessage(Json content) { return {{"role", "user"}, {"content", std::move(content)}}; }
Json TextContent(const std::string& text) { return {{"type", "text"}, {"text", text}}; }

// A prompts/get result: one user message per content block.
mcp::PromptAnswer UserMessages(std::vector<Json> contents) {
  Json messages = Json::array();
  for (Json& content : contents) messages.push_back(UserMessage(std::move(content)));
  return Json{{"messages", std::move(messages)}};
}

Result<mcp::PromptAnswer> SimplePrompt(const mcp::PromptCall&) {
  return UserMessages({TextContent("This is a simple prompt for testing.")});
}

Result<mcp::PromptAnswer> PromptWithArguments(const mcp::PromptCall& call) {
  const Json& args = call.arguments;
  return UserMessages({TextContent("Prompt with arguments: arg1='" + args.value("arg1", "") +
                                   "', arg2='" + args.value("arg2", "") + "'")});
}

Result<mcp::PromptAnswer> PromptWithEmbeddedResource(const mcp::PromptCall& call) {
  Json resource = {{"type", "resource"},
                   {"resource",
                    {{"uri", call.arguments.value("resourceUri", "")},
                     {"mimeType", "text/plain"},
                     {"text", "Embedded resource content for testing."}}}};
  return UserMessages(
      {std::move(resource), TextContent("Please process the embedded resource above.")});
}

Result<mcp::PromptAnswer> PromptNeedingInput(const mcp::PromptCall& call) {
  const Json* context = AcceptedString(call.inputs, "user_context", "context");
  if (context == nullptr) {
    mcp::PromptAnswer ask;
    ask.input_required = mcp::InputRequest{
        {{"user_context",
          ElicitationRequest("What context should the prompt use?", "context", "string")}},
        std::nullopt};
    return ask;
  }
  return UserMessages({TextContent("Use this context: " + context->get<std::string>())});
}

Result<mcp::PromptAnswer> PromptWithImage(const mcp::PromptCall&) {
  return UserMessages({ImageBlock(), TextContent("Please analyze the image above.")});
}

Status RegisterPrompts(mcp::McpServer& server) {
  using mcp::PromptDefinition;
  const std::pair<PromptDefinition, mcp::PromptHandler> prompts[] = {
      {{"test_simple_prompt", "Simple Test Prompt", "A simple prompt without arguments", {}},
       SimplePrompt},
      {{"test_prompt_with_arguments",
        "Prompt With Arguments",
        "A prompt with required arguments",
        {{"arg1", "First test argument", true}, {"arg2", "Second test argument", true}}},
       PromptWithArguments},
      {{"test_prompt_with_embedded_resource",
        "Prompt With Embedded Resource",
        "A prompt that includes an embedded resource",
        {{"resourceUri", "URI of the resource to embed", true}}},
       PromptWithEmbeddedResource},
      {{"test_input_required_result_prompt",
        "Prompt Needing Input",
        "Asks for its context with an input_required elicitation (SEP-2322)",
        {}},
       PromptNeedingInput},
      {{"test_prompt_with_image", "Prompt With Image", "A prompt that includes image content", {}},
       PromptWithImage},
  };
  for (const auto& [definition, handler] : prompts) {
    RETURN_IF_ERROR(server.RegisterPrompt(definition, handler));
  }
  return Status::Ok();
}

}  // namespace

Status RegisterConformanceFixtures(mcp::McpServer& server) {
  RETURN_IF_ERROR(RegisterTable(server, kTools));
  RETURN_IF_ERROR(RegisterTable(server, kInputRequiredTools));
  for (const auto& [definition, handler] : StatelessTools(server)) {
    RETURN_IF_ERROR(server.RegisterTool(definition, handler));
  }
  RETURN_IF_ERROR(RegisterTaskFixtures(server));
  RETURN_IF_ERROR(RegisterPrompts(server));
  server.AddResourceProvider(std::make_shared<TestResources>());
  // Like the reference server: a valid, empty completion for any reference.
  server.SetCompletionHandler([](const Json&) -> Result<Json> {
    return Json{{"values", Json::array()}, {"total", 0}, {"hasMore", false}};
  });
  return Status::Ok();
}

}  // namespace imgmcp::conformance
