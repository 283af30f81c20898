// Running a tools/call on a worker for a connection (RunTool, with the ToolCallContext its handler
// sees), and the multi round-trip requests (MRTR) of tools/call and prompts/get: opening a
// retry's sealed requestState and answering input_required.
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <optional>
#include <utility>

#include "common/log.h"
#include "common/thread_annotations.h"
#include "common/trace_context.h"
#include "mcp/connection.h"
#include "mcp/log_tag.h"
#include "mcp/method_handlers.h"
#include "mcp/server.h"

namespace imgmcp::mcp {

namespace {

// What a running tools/call can do towards its client (see tool.h). Lives on the worker thread
// for the duration of the handler.
class ConnectionCallContext final : public ToolCallContext {
 public:
  ConnectionCallContext(std::shared_ptr<Connection> connection, const RequestScope& scope,
                        std::stop_token token, std::unique_ptr<CallReservation> reservation,
                        InputResponses inputs)
      : connection_(std::move(connection)),
        scope_(scope),
        token_(std::move(token)),
        reservation_(std::move(reservation)),
        inputs_(std::move(inputs)) {}

  bool HasProgressToken() const override { return scope_.progress_token.has_value(); }

  void ReportProgress(double progress, std::optional<double> total,
                      const std::string& message) override {
    if (!scope_.progress_token) return;
    // Held while sending so notifications leave in order and none after MarkDone.
    MutexLock lock(mu_);
    if (done_) return;
    if (last_progress_ && !(progress > *last_progress_)) {
      progress = std::nextafter(*last_progress_, std::numeric_limits<double>::infinity());
    }
    last_progress_ = progress;
    connection_->EmitNotification(methods::kProgress,
                                  ProgressParams(*scope_.progress_token, progress, total, message),
                                  scope_.id, scope_.modern());
  }

  void Log(LogLevel level, const std::string& logger, const Json& data) override {
    MutexLock lock(mu_);
    if (done_) return;
    connection_->SendLog(scope_, level, logger, data);
  }

  std::optional<Json> ProgressToken() const override { return scope_.progress_token; }
  // Called only by the handler, on the worker thread that owns this context.
  std::unique_ptr<CallReservation> TakeReservation() override { return std::move(reservation_); }
  void CloseStream() override { connection_->CloseRequestStream(scope_.id); }
  std::stop_token Cancellation() const override { return token_; }
  std::string ProtocolVersion() const override { return scope_.protocol_version; }
  std::string TraceParent() const override { return scope_.traceparent; }
  bool Modern() const override { return scope_.modern(); }
  const Json& ClientCapabilities() const override { return scope_.client_capabilities; }
  const InputResponses& Inputs() const override { return inputs_; }
  const Caller& caller() const override { return scope_.caller; }

  Result<Json> SendRequest(const std::string& method, const Json& params) override {
    if (scope_.modern()) {
      return MakeError(ErrorCode::kUnsupported,
                       "a 2026-07-28 request cannot be answered with a server→client request (" +
                           method + "); the tool must ask with input_required instead");
    }
    return connection_->SendRequest(method, params, scope_.id, token_);
  }

  // After this nothing more is sent on behalf of the call (its response follows).
  void MarkDone() {
    MutexLock lock(mu_);
    done_ = true;
  }

 private:
  const std::shared_ptr<Connection> connection_;
  const RequestScope scope_;
  const std::stop_token token_;
  Mutex mu_;  // guards done_ and last_progress_, and orders this call's notifications
  bool done_ GUARDED_BY(mu_) = false;
  std::optional<double> last_progress_ GUARDED_BY(mu_);
  std::unique_ptr<CallReservation> reservation_;  // owned by the worker thread; no lock needed
  const InputResponses inputs_;
};

}  // namespace

namespace handlers {

Outcome RunTool(Connection& c, const RequestScope& scope, const ToolSpec& tool, AdmittedCall& call,
                const InputResponses& inputs, std::stop_token token) {
  const std::string& name = tool.definition.name;
  const auto started = std::chrono::steady_clock::now();
  std::optional<TraceParent> trace = ParseTraceParent(scope.traceparent);
  log::CallScope log_scope(
      {trace ? trace->trace_id : "", methods::kToolsCall, name, scope.session_id});
  ConnectionCallContext context(c.shared_from_this(), scope, token, std::move(call.reservation),
                                inputs);
  ToolResult result;
  try {
    result = call.run(context);
  } catch (const std::exception& e) {  // tool bug: still an answer, not a crash
    log::Error(kLog, "tool " + name + " threw: " + e.what());
    result = ToolResult::ErrorText("Tool " + name + " failed: " + e.what());
  } catch (...) {
    result = ToolResult::ErrorText("Tool " + name + " failed");
  }
  context.MarkDone();
  if (log::MinLevel() <= log::Level::kInfo) {
    log::Write(log::Level::kInfo, kLog,
               "tools/call " + name + (scope.session_id.empty() ? "" : " " + scope.session_id) +
                   (result.is_error         ? ": isError"
                    : result.input_required ? ": input required"
                                            : ": ok"),
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                   .count());
  }
  if (result.input_required && !scope.modern()) {
    result =
        ToolResult::ErrorText("Tool " + name + " needs input from the client, which protocol " +
                              scope.protocol_version + " cannot ask for");
  }
  if (result.input_required) {
    return AskForInput(c.server(), scope, StateScope(methods::kToolsCall, name),
                       std::move(*result.input_required));
  }
  if (!result.is_error && !result.input_required && tool.definition.output_schema &&
      !result.structured_content) {
    log::Warn(kLog, "tool " + name + " declares an outputSchema but returned no structuredContent");
  }
  return Outcome::Of(ToolResultToJson(std::move(result)));
}

// --- multi round-trip requests ------------------------------------------------------------------

std::optional<RpcError> OpenRequestState(const McpServer& server, const std::string& request,
                                         InputResponses* inputs) {
  if (!inputs->request_state) return std::nullopt;
  auto plain = server.request_state_seal().Open(request, *inputs->request_state);
  if (!plain.ok()) return InvalidParams(plain.error().message);
  inputs->request_state = std::move(plain).value();
  return std::nullopt;
}

Outcome AskForInput(const McpServer& server, const RequestScope& scope, const std::string& request,
                    InputRequest input) {
  if (!scope.modern()) {
    return Outcome::Fail(InternalError(request + " needs input from the client, which protocol " +
                                       scope.protocol_version + " cannot ask for"));
  }
  Json missing = Json::object();
  if (!input.requests.is_object()) input.requests = Json::object();
  for (const auto& [key, asked] : input.requests.items()) {
    const std::string capability =
        ClientCapabilityFor(asked.is_object() ? asked.value("method", "") : "");
    if (capability.empty()) {
      log::Error(kLog, request + " asked the client for an unknown kind of input: " + asked.dump());
      return Outcome::Fail(InternalError(request + " asked for input a client cannot give"));
    }
    if (!scope.client_capabilities.contains(capability)) missing[capability] = Json::object();
  }
  if (!missing.empty()) return Outcome::Fail(MissingClientCapability(missing));
  std::optional<std::string> state;
  if (input.state) state = server.request_state_seal().Seal(request, *input.state);
  return Outcome::Of(InputRequiredResult(std::move(input.requests), state));
}

}  // namespace handlers
}  // namespace imgmcp::mcp
