#include "server/conformance/task_fixtures.h"

#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/cancellation.h"
#include "server/conformance/fixture_requests.h"

namespace imgmcp::conformance {

namespace {

using mcp::InputResponses;
using mcp::TaskSupport;
using mcp::ToolCallContext;
using mcp::ToolDefinition;
using mcp::ToolResult;

ToolDefinition TaskTool(std::string name, std::string description, Json properties,
                        TaskSupport support) {
  ToolDefinition d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.input_schema = Json{{"type", "object"}, {"properties", std::move(properties)}};
  d.task_support = support;
  return d;
}

// The accepted elicitation answer under `key`, or nullptr.
const Json* Accepted(const InputResponses& inputs, const std::string& key) {
  if (!inputs.responses || !inputs.responses->is_object()) return nullptr;
  auto it = inputs.responses->find(key);
  if (it == inputs.responses->end() || !it->is_object() || it->value("action", "") != "accept") {
    return nullptr;
  }
  auto content = it->find("content");
  return content != it->end() && content->is_object() ? &*content : nullptr;
}

double Seconds(const Json& args) {
  auto it = args.find("seconds");
  return it != args.end() && it->is_number() && it->get<double>() > 0 ? it->get<double>() : 0;
}

ToolResult SlowCompute(const Json& args, ToolCallContext& ctx) {
  const auto wait = std::chrono::duration<double>(Seconds(args));
  if (!SleepUnlessStopped(std::chrono::duration_cast<std::chrono::steady_clock::duration>(wait),
                          ctx.Cancellation())) {
    return ToolResult::ErrorText("slow_compute was cancelled");
  }
  return ToolResult::Text("Computed " + args.value("label", std::string("result")) + " after " +
                          std::to_string(Seconds(args)) + " s");
}

ToolResult FailingJob(const Json&, ToolCallContext& ctx) {
  SleepUnlessStopped(std::chrono::milliseconds(200), ctx.Cancellation());
  return ToolResult::ErrorText("failing_job failed, as it always does");
}

ToolResult ProtocolErrorJob(const Json&, ToolCallContext&) {
  throw std::runtime_error("protocol_error_job broke down, as it always does");
}

ToolResult ConfirmDelete(const Json& args, ToolCallContext& ctx) {
  const std::string file = args.value("filename", std::string("the file"));
  const Json* answer = Accepted(ctx.Inputs(), "confirm");
  if (answer == nullptr) {
    return AskFor({{"confirm", ElicitationRequest("Delete " + file + "?", "confirm", "boolean")}});
  }
  return ToolResult::Text(answer->value("confirm", false) ? "Deleted " + file : "Kept " + file);
}

ToolResult MultiInput(const Json&, ToolCallContext& ctx) {
  const Json* name = Accepted(ctx.Inputs(), "name");
  const Json* confirm = Accepted(ctx.Inputs(), "confirm");
  if (name == nullptr || confirm == nullptr) {
    return AskFor({{"name", ElicitationRequest("What is your name?", "name", "string")},
                   {"confirm", ElicitationRequest("Proceed?", "confirm", "boolean")}});
  }
  return ToolResult::Text("Hello, " + name->value("name", std::string("?")) + "; confirmed");
}

ToolResult AskNameThenTask(const Json&, ToolCallContext& ctx) {
  const Json* answer = Accepted(ctx.Inputs(), "user_name");
  if (answer == nullptr) {
    return AskFor({{"user_name", ElicitationRequest("What is your name?", "name", "string")}});
  }
  return ToolResult::Text("Hello, " + answer->value("name", std::string("?")) + "!");
}

}  // namespace

Status RegisterTaskFixtures(mcp::McpServer& server) {
  const Json text = {{"type", "string"}};
  const Json number = {{"type", "number"}};
  ToolDefinition slow = TaskTool("slow_compute", "Waits `seconds` (a task), then answers",
                                 {{"seconds", number}, {"label", text}}, TaskSupport::kOptional);
  slow.as_task = [](const Json& args, const InputResponses&) { return Seconds(args) > 0; };
  ToolDefinition with_task =
      TaskTool("test_tool_with_task", "Asks for a name with input_required, then becomes a task",
               Json::object(), TaskSupport::kRequired);
  with_task.as_task = [](const Json&, const InputResponses& inputs) {
    return Accepted(inputs, "user_name") != nullptr;
  };
  std::vector<std::pair<ToolDefinition, mcp::ToolHandler>> tools;
  tools.emplace_back(
      TaskTool("greet", "Says hello; never a task", {{"name", text}}, TaskSupport::kForbidden),
      [](const Json& args, ToolCallContext&) {
        return ToolResult::Text("Hello, " + args.value("name", std::string("?")) + "!");
      });
  tools.emplace_back(std::move(slow), SlowCompute);
  tools.emplace_back(TaskTool("failing_job", "A task whose tool reports an error", Json::object(),
                              TaskSupport::kRequired),
                     FailingJob);
  tools.emplace_back(TaskTool("protocol_error_job", "A task that fails with a protocol error",
                              Json::object(), TaskSupport::kRequired),
                     ProtocolErrorJob);
  tools.emplace_back(TaskTool("confirm_delete", "A task that asks the client to confirm",
                              {{"filename", text}}, TaskSupport::kRequired),
                     ConfirmDelete);
  tools.emplace_back(TaskTool("multi_input", "A task that asks two questions at once",
                              Json::object(), TaskSupport::kRequired),
                     MultiInput);
  tools.emplace_back(std::move(with_task), AskNameThenTask);
  for (auto& [definition, handler] : tools) {
    RETURN_IF_ERROR(server.RegisterTool(std::move(definition), std::move(handler)));
  }
  return Status::Ok();
}

}  // namespace imgmcp::conformance
