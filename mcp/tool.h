// The typed tool registry's vocabulary: what a tool declares and what its handler gets and returns.
// mcp/ owns dispatch; server/tools (and server/conformance, the conformance fixtures) register
// tools here.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "common/json.h"
#include "common/result.h"
#include "mcp/caller.h"

namespace imgmcp::mcp {

// MCP tool annotations (hints). Unset fields are omitted from tools/list.
struct ToolAnnotations {
  std::optional<bool> read_only;    // readOnlyHint
  std::optional<bool> destructive;  // destructiveHint
  std::optional<bool> idempotent;   // idempotentHint
  std::optional<bool> open_world;   // openWorldHint
};

struct InputResponses;

// Whether a tool's calls may become tasks (task_runner.h) for clients that declared the tasks
// extension: never, when the server decides so, or always (clients without it are refused).
enum class TaskSupport { kForbidden, kOptional, kRequired };

struct ToolDefinition {
  std::string name;
  std::string title;
  std::string description;
  Json input_schema;                  // root "type":"object"
  std::optional<Json> output_schema;  // when set, successful results carry structured_content
  ToolAnnotations annotations;
  // Client capabilities a call needs (e.g. {"sampling":{}}). In the modern era a request that does
  // not declare them is refused with -32021 before the handler runs; legacy clients declared
  // theirs at initialize, and the handler's SendRequest fails without them. Empty: none.
  Json required_client_capabilities = Json::object();
  // The tool's `_meta` in tools/list (e.g. the MCP Apps `ui.resourceUri`); omitted when unset.
  std::optional<Json> meta;
  // The tool answers promptly, sends nothing before its result (no progress, log or client
  // request) and never waits for a session's turn. A transport whose caller blocks for the answer
  // anyway (an HTTP POST) may then run it on the calling thread instead of a worker. Not listed.
  bool quick = false;
  // The argument that makes a call of a read-only tool write something (get_image's save_to
  // writes a file): an OAuth-protected transport then asks for the write scope. "": none. Not
  // listed.
  std::string writing_argument;
  TaskSupport task_support = TaskSupport::kForbidden;
  // With task support: decides per call whether it becomes a task (the server decides, e.g. a
  // call that finishes at once answers directly). Unset: every call from a client that declared
  // the extension becomes one.
  std::function<bool(const Json& arguments, const InputResponses& inputs)> as_task;
};

// Multi round-trip requests (modern era): what a call asks the client for before it can finish,
// and what the client sends back when it retries the call.
struct InputRequest {
  Json requests = Json::object();    // {key: {method, params}}: elicitation/create, sampling/…
  std::optional<std::string> state;  // opaque to the client; echoed on the retry
};
struct InputResponses {
  std::optional<Json> responses;  // {key: the client's result for that request}
  std::optional<std::string> request_state;
};

// A tool's answer. Failures of the tool itself (validation, backend, business rules) are results
// with is_error = true and a text block — never JSON-RPC errors.
struct ToolResult {
  Json content = Json::array();            // MCP content blocks
  std::optional<Json> structured_content;  // object conforming to output_schema
  bool is_error = false;
  // Set: the call needs input from the client first (modern era): the answer is an
  // input_required result and content, structured_content and is_error are not sent.
  std::optional<InputRequest> input_required;
  // Set (by a call that runs as a task, with a ledger): the call goes on outside this process —
  // e.g. in a Gemini batch job that the store's batch poller follows and ends — and the task
  // stays working with this status message; its row is the ledger's alone from now on (the
  // runner forgets it here). content, structured_content and is_error are not sent.
  std::optional<std::string> handed_off;

  static ToolResult Text(std::string text);
  static ToolResult ErrorText(std::string text);
};

// What a tool reserves when its call is *received*, in arrival order, before the call waits for a
// worker thread — e.g. an edit's place in its session's queue. Worker threads start calls in no
// particular order, so anything that must follow arrival order is decided here. Destroying the
// reservation gives it up (the call was cancelled, refused or has finished).
class CallReservation {
 public:
  virtual ~CallReservation() = default;
};

// Runs on the transport's reading thread, synchronously, in the order calls arrive; must be quick
// and must not block. Returns nullptr when there is nothing to reserve (e.g. invalid arguments,
// which the handler then reports).
using ToolAdmission =
    std::function<std::unique_ptr<CallReservation>(const Json& arguments, const Caller& caller)>;

// RFC 5424 levels as MCP names them: debug info notice warning error critical alert emergency.
enum class LogLevel { kDebug, kInfo, kNotice, kWarning, kError, kCritical, kAlert, kEmergency };

// What a running tool call can do towards its client. Implemented by the protocol core; valid only
// for the duration of the handler call. Thread-safe.
class ToolCallContext {
 public:
  virtual ~ToolCallContext() = default;

  // True when the request carried params._meta.progressToken.
  virtual bool HasProgressToken() const = 0;
  // Sends notifications/progress if there is a token (no-op otherwise). The core keeps progress
  // strictly increasing (values that do not increase are raised just above the last one) and sends
  // nothing after the response.
  virtual void ReportProgress(double progress, std::optional<double> total,
                              const std::string& message) = 0;
  // Sends notifications/message when `level` is at or above the level set by logging/setLevel.
  virtual void Log(LogLevel level, const std::string& logger, const Json& data) = 0;
  // Cancelled by notifications/cancelled for this request (or by transport shutdown).
  virtual std::stop_token Cancellation() const = 0;
  // The negotiated protocol version of the connection this call came on.
  virtual std::string ProtocolVersion() const = 0;
  // The request's W3C traceparent (params._meta.traceparent, or the HTTP header), "" if none;
  // calls the tool makes on the request's behalf pass it on.
  virtual std::string TraceParent() const { return {}; }
  // Sends a server→client request (sampling/createMessage, elicitation/create, …) and waits for
  // the client's answer: the result object, or an Error (client error, timeout, cancellation).
  virtual Result<Json> SendRequest(const std::string& method, const Json& params) = 0;
  // The request's params._meta.progressToken (string or integer), if any.
  virtual std::optional<Json> ProgressToken() const { return std::nullopt; }
  // What the tool's admission hook reserved when the call arrived (nullptr when none). The
  // handler may take ownership with TakeReservation().
  virtual std::unique_ptr<CallReservation> TakeReservation() { return nullptr; }
  // Ends the transport stream carrying this call's messages while the call goes on (SEP-1699);
  // the client resumes it. A no-op on transports without such streams (stdio).
  virtual void CloseStream() {}
  // True when the call came as a modern (2026-07-28) request: server→client requests are then
  // made by answering input_required (ToolResult::input_required), not with SendRequest.
  virtual bool Modern() const { return false; }
  // The capabilities the client declared (at initialize, or in the request's _meta).
  virtual const Json& ClientCapabilities() const {
    static const Json kNone = Json::object();
    return kNone;
  }
  // The id of the task this call runs as (task_runner.h), "" for a direct call. A tool that
  // commits records session::TaskIdempotencyKey(TaskId()) with it, so a task commits at most once.
  virtual std::string TaskId() const { return {}; }
  // kCancelled when the task this call runs as was cancelled, here or through another replica
  // (its row says so). A tool asks inside its turn, just before it commits, and then commits
  // nothing. Always OK for a direct call.
  virtual Status TaskStillWanted() { return Status::Ok(); }
  // What the client sent back on retrying a call answered input_required (modern era).
  virtual const InputResponses& Inputs() const {
    static const InputResponses kNone;
    return kNone;
  }
  // Who made the call (caller.h): whose sessions it reaches.
  virtual const Caller& caller() const {
    static const Caller kNobody;
    return kNobody;
  }
};

using ToolHandler = std::function<ToolResult(const Json& arguments, ToolCallContext& ctx)>;

// A tools/call as admitted when it arrives: its arguments parsed and checked, and what its
// admission reserved. `run` executes it later, on a worker, with the call's context (which hands
// the reservation to the handler through TakeReservation).
struct AdmittedCall {
  std::unique_ptr<CallReservation> reservation;
  std::function<ToolResult(ToolCallContext& ctx)> run;
};

// A tool as the registry keeps it: its definition, and what becomes of a call's raw arguments on
// arrival (on the transport's reading thread, in arrival order: quick, never blocking).
struct ToolSpec {
  ToolDefinition definition;
  std::function<AdmittedCall(Json arguments, const Caller& caller)> admit;
};

// A tool with typed arguments. `parse` reads the raw arguments into Args strictly (unknown
// fields, wrong types and out-of-range values are errors naming the field and what is allowed);
// a parse error is the call's isError result "<tool> failed: <message>" and the handler never
// runs. `admission` (optional) sees the parsed arguments when the call arrives (see
// CallReservation).
template <typename Args>
struct TypedTool {
  ToolDefinition definition;
  std::function<Result<Args>(const Json& arguments)> parse;
  std::function<ToolResult(const Args& args, ToolCallContext& ctx)> handler;
  std::function<std::unique_ptr<CallReservation>(const Args& args, const Caller& caller)> admission;
};

// The text of the isError result for arguments that failed to parse.
std::string ArgumentErrorText(const std::string& tool, const Error& error);

template <typename Args>
ToolSpec MakeToolSpec(TypedTool<Args> tool) {
  ToolSpec spec;
  spec.definition = std::move(tool.definition);
  auto handler = std::make_shared<const decltype(tool.handler)>(std::move(tool.handler));
  spec.admit = [name = spec.definition.name, parse = std::move(tool.parse), handler,
                admission = std::move(tool.admission)](Json arguments, const Caller& caller) {
    AdmittedCall call;
    Result<Args> args = parse(arguments);
    if (!args.ok()) {
      call.run = [text = ArgumentErrorText(name, args.error())](ToolCallContext&) {
        return ToolResult::ErrorText(text);
      };
      return call;
    }
    auto parsed = std::make_shared<const Args>(std::move(args).value());
    if (admission) call.reservation = admission(*parsed, caller);
    call.run = [handler, parsed](ToolCallContext& ctx) { return (*handler)(*parsed, ctx); };
    return call;
  };
  return spec;
}

// A tool that takes its arguments as raw JSON (test doubles such as the conformance fixtures).
ToolSpec MakeToolSpec(ToolDefinition definition, ToolHandler handler, ToolAdmission admission = {});

}  // namespace imgmcp::mcp
