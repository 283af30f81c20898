#include "server/tools/conformance_fixtures.h"

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>

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
  const auto end = std::chrono::steady_clock::now() + total;
  while (std::chrono::steady_clock::now() < end) {
    if (ctx.Cancellation().IsCancelled()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return !ctx.Cancellation().IsCancelled();
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
            Json{{"$schema", "https://json-schema.org/draft/2020-12/schema"},
                 {"type", "object"},
                 {"$defs",
                  {{"address",
                    {{"type", "object"},
                     {"properties",
                      {{"street", {{"type", "string"}}}, {"city", {{"type", "string"}}}}}}}}},
                 {"properties",
                  {{"name", {{"type", "string"}}}, {"address", {{"$ref", "#/$defs/address"}}}}},
                 {"additionalProperties", false}}),
       [](const Json& args, ToolCallContext&) {
         return ToolResult::Text("JSON Schema 2020-12 tool called with: " + args.dump());
       }},
  };
  for (const auto& [definition, handler] : tools) {
    Status s = server.RegisterTool(definition, handler);
    if (!s.ok()) return s;
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
      [](const Json&) -> Result<Json> {
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
      [](const Json& args) -> Result<Json> {
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
      [](const Json& args) -> Result<Json> {
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
  return server.RegisterPrompt(
      PromptDefinition{"test_prompt_with_image",
                       "Prompt With Image",
                       "A prompt that includes image content",
                       {}},
      [](const Json&) -> Result<Json> {
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
