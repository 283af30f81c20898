// The core's one method table (methods.cpp) as its dispatcher sees it, and the handlers it names.
// As in the Go SDK's mcp package, a handler is a function of the connection it serves — which
// gives it the shared server (McpServer: tools, resources, prompts, tasks), the session's state
// (SessionState) and the JSON-RPC plumbing (JsonRpcConnection) — and of its request's scope and
// typed params; it returns a result, an error, or Outcome::Later() when it answers itself. Internal
// to the core: transports use Connection's public part and method_table.h.
#pragma once

#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "common/json.h"
#include "common/result.h"
#include "mcp/method_table.h"
#include "mcp/protocol.h"
#include "mcp/request_scope.h"
#include "mcp/task_json.h"
#include "mcp/task_runner.h"
#include "mcp/tool.h"
#include "mcp/tool_registry.h"

namespace imgmcp::mcp {

class Connection;
class McpServer;

// One entry of the table: the method's facts and its handler, which parses the params into its
// typed struct (an error names the field) and serves the request.
using MethodHandler = Outcome (*)(Connection& connection, RequestScope& scope, const Json& params);
struct MethodSpec {
  MethodInfo info;
  MethodHandler handler = nullptr;
};
// nullptr for a method the core does not know.
const MethodSpec* FindMethodSpec(std::string_view name);

namespace handlers {

// --- legacy lifecycle and session state (methods.cpp) -------------------------------------------
Outcome Initialize(Connection& c, RequestScope& scope, const InitializeParams& params);
Outcome Ping(Connection& c, RequestScope& scope, const NoParams& params);
Outcome SetLogLevel(Connection& c, RequestScope& scope, const SetLevelParams& params);
Outcome Subscribe(Connection& c, RequestScope& scope, const UriParams& params);
Outcome Unsubscribe(Connection& c, RequestScope& scope, const UriParams& params);
Outcome Initialized(Connection& c, RequestScope& scope, const NoParams& params);
Outcome Cancelled(Connection& c, RequestScope& scope, const CancelledParams& params);
// --- modern discovery and change notifications (methods.cpp) -------------------------------------
Outcome Discover(Connection& c, RequestScope& scope, const NoParams& params);
Outcome Listen(Connection& c, RequestScope& scope, const ListenParams& params);
// --- tools, resources, prompts, completion (methods.cpp) -----------------------------------------
Outcome ListTools(Connection& c, RequestScope& scope, const ListParams& params);
Outcome CallTool(Connection& c, RequestScope& scope, const CallToolParams& params);
Outcome ListResources(Connection& c, RequestScope& scope, const ListParams& params);
Outcome ListResourceTemplates(Connection& c, RequestScope& scope, const ListParams& params);
Outcome ReadResource(Connection& c, RequestScope& scope, const UriParams& params);
Outcome ListPrompts(Connection& c, RequestScope& scope, const ListParams& params);
Outcome GetPrompt(Connection& c, RequestScope& scope, const GetPromptParams& params);
Outcome Complete(Connection& c, RequestScope& scope, const CompleteParams& params);

// --- the tasks extension (task_methods.cpp)
// -------------------------------------------------------
Outcome GetTask(Connection& c, RequestScope& scope, const TaskIdParams& params);
Outcome UpdateTask(Connection& c, RequestScope& scope, const TaskUpdateParams& params);
Outcome CancelTask(Connection& c, RequestScope& scope, const TaskIdParams& params);
// Whether a tools/call of `tool` becomes a task (modern: the extension declared and the server
// decides; legacy: params.task in a 2025-11-25 session); the error is the answer (e.g. the
// tool needs the extension and the client did not declare it).
Result<bool> CallAsTask(const RequestScope& scope, const ToolSpec& tool,
                        const CallToolParams& params);
// tools/call answered with a task: starts the admitted call as a task of the caller's.
Outcome StartTask(Connection& c, const RequestScope& scope, const ToolSpec& tool,
                  const CallToolParams& params, std::shared_ptr<AdmittedCall> call,
                  InputResponses inputs);

// --- the 2025-11-25 tasks utility of legacy sessions (legacy_task_methods.cpp)
// --------------------
Outcome LegacyGetTask(Connection& c, RequestScope& scope, const TaskIdParams& params);
Outcome LegacyCancelTask(Connection& c, RequestScope& scope, const TaskIdParams& params);
// Records a tasks/cancel in the server's audit trail (ServerOptions::audit), if it keeps one.
void AuditCancel(Connection& c, const RequestScope& scope, const std::string& task_id,
                 const Result<CancelOutcome>& cancelled);
Outcome TaskResult(Connection& c, RequestScope& scope, const TaskIdParams& params);
Outcome ListTasks(Connection& c, RequestScope& scope, const ListParams& params);
// A legacy task's CreateTaskResult, sent at once; then its status notifications follow.
Outcome AnswerLegacyTask(Connection& c, const RequestScope& scope, const TaskSnapshot& task);
// notifications/tasks/status of a task this legacy session created, once per new status.
void NotifyLegacyTask(Connection& c, const TaskSnapshot& task);

// --- running a tool call, and multi round-trip requests (tool_call.cpp)
// --------------------------- Runs an admitted tools/call on this (worker) thread.
Outcome RunTool(Connection& c, const RequestScope& scope, const ToolSpec& tool, AdmittedCall& call,
                const InputResponses& inputs, std::stop_token token);
// Verifies a retry's sealed requestState for `request` (e.g. "tools/call name") and replaces
// it with the handler's plain state; the error (-32602) is the answer.
std::optional<RpcError> OpenRequestState(const McpServer& server, const std::string& request,
                                         InputResponses* inputs);
// The input_required answer: its requests only for capabilities the client declared (else
// -32021), its state sealed for `request`. Legacy requests cannot be answered so (-32603).
Outcome AskForInput(const McpServer& server, const RequestScope& scope, const std::string& request,
                    InputRequest input);

}  // namespace handlers
}  // namespace imgmcp::mcp
