#include "mcp/connection.h"

#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <optional>
#include <utility>

#include "common/log.h"
#include "common/trace_context.h"
#include "mcp/json_writer.h"
#include "mcp/log_tag.h"
#include "mcp/server.h"

namespace imgmcp::mcp {

// What a running tools/call can do towards its client (see tool.h). Lives on the worker thread
// for the duration of the handler.
class Connection::CallContext final : public ToolCallContext {
 public:
  CallContext(std::shared_ptr<Connection> connection, const RequestScope& scope,
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
    std::lock_guard<std::mutex> lock(mu_);
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
    std::lock_guard<std::mutex> lock(mu_);
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
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }

 private:
  const std::shared_ptr<Connection> connection_;
  const RequestScope scope_;
  const std::stop_token token_;
  std::mutex mu_;  // guards done_ and last_progress_, and orders this call's notifications
  bool done_ = false;
  std::optional<double> last_progress_;
  std::unique_ptr<CallReservation> reservation_;  // owned by the worker thread; no lock needed
  const InputResponses inputs_;
};

// The answer to a 2025-03-26 batch: one response per request, sent together when the last one is
// done. `pending` starts at 1 (a guard released after dispatch) and counts undone elements.
struct Connection::Batch {
  std::optional<Json> first_request_id;  // written before dispatch, then read-only
  std::mutex mu;                         // guards responses and pending
  Json responses = Json::array();
  int pending = 1;
};

// A server→client request waiting for the client's answer.
struct Connection::PendingRequest {
  std::mutex mu;  // guards outcome
  std::condition_variable_any cv;
  std::optional<Result<Json>> outcome;

  void Fulfil(Result<Json> result) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!outcome) outcome.emplace(std::move(result));
    }
    cv.notify_all();
  }
};

Connection::Outcome Connection::Outcome::From(Result<Json> result) {
  if (result.ok()) return Of(std::move(result).value());
  return Fail(ToRpcError(result.error()));
}

Connection::Connection(McpServer& server, MessageSink& sink, ConnectionMode mode)
    : server_(server),
      mode_(mode),
      sink_(&sink),
      log_level_(static_cast<int>(server.options().default_client_log_level)) {}

Connection::~Connection() { Close(); }

// --- incoming -------------------------------------------------------------------------------

void Connection::HandleMessage(std::string_view text) {
  ParsedMessage parsed = ParseMessageText(text);
  if (parsed.error) {
    ReplyError(nullptr, *parsed.error, nullptr);
    return;
  }
  HandleJson(std::move(parsed.message));
}

void Connection::HandleJson(Json message) {
  try {
    if (NestsDeeperThan(message, kMaxJsonNestingDepth)) {
      ReplyError(ReadableId(message), InvalidRequest(TooDeepMessage()), nullptr);
      return;
    }
    if (!IsBatch(message)) {
      ProcessOne(std::move(message), nullptr);
      return;
    }
    if (auto refusal = CheckBatch(message)) {
      ReplyError(nullptr, *refusal, nullptr);
      return;
    }
    auto batch = std::make_shared<Batch>();
    for (const Json& element : message) {
      const Json* params = nullptr;
      IncomingMessage shape = PeekIncoming(element, &params);
      if (shape.kind == IncomingMessage::Kind::kRequest) {
        batch->first_request_id = shape.id;
        break;
      }
    }
    for (Json& element : message) {
      {
        std::lock_guard<std::mutex> lock(batch->mu);
        ++batch->pending;
      }
      ProcessOne(std::move(element), batch);
    }
    BatchDone(batch, std::nullopt);    // release the guard
  } catch (const std::exception& e) {  // a bug below: answer rather than die
    log::Error(kLog, std::string("unexpected exception handling a message: ") + e.what());
    ReplyError(nullptr, InternalError("Internal error"), nullptr);
  }
}

std::optional<RpcError> Connection::CheckBatch(const Json& batch) const {
  if (batch.empty()) return InvalidRequest("empty batch");
  if (mode_ == ConnectionMode::kModernOnly) {
    return InvalidRequest("batches are not part of protocol revision 2026-07-28");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!initialized_) return InvalidRequest("batches are not allowed before initialize");
  if (!BatchesAllowed(protocol_version_)) {
    return InvalidRequest("batches are not supported in protocol version " + protocol_version_);
  }
  return std::nullopt;
}

void Connection::ProcessOne(Json message, const std::shared_ptr<Batch>& batch) {
  IncomingMessage in = ReadIncoming(std::move(message));
  switch (in.kind) {
    case IncomingMessage::Kind::kRequest:
      if (in.error) {
        ReplyError(in.id, *in.error, batch);
      } else {
        HandleRequest(in, batch);
      }
      return;
    case IncomingMessage::Kind::kNotification:
      if (!in.error) HandleNotification(in);  // never answered
      break;
    case IncomingMessage::Kind::kResponse:
      HandleResponse(in);
      break;
    case IncomingMessage::Kind::kInvalid:
      if (in.error) {
        ReplyError(in.id, *in.error, batch);
        return;
      }
      break;  // a stray response: dropped
  }
  if (batch) BatchDone(batch, std::nullopt);
}

void Connection::HandleRequest(IncomingMessage& in, const std::shared_ptr<Batch>& batch) {
  RequestScope scope;
  scope.id = in.id;
  scope.batch = batch;
  const bool modern = mode_ == ConnectionMode::kModernOnly || HasEnvelopeClaim(in.params);
  if (modern) {
    if (batch) {
      ReplyError(in.id,
                 InvalidRequest("a batch cannot carry requests of protocol revision 2026-07-28"),
                 batch);
      return;
    }
    ModernEnvelope envelope;
    if (auto error = ReadModernEnvelope(in.params, &envelope)) {
      ReplyError(in.id, *error, batch);
      return;
    }
    scope.era = Era::kModern;
    scope.protocol_version = std::move(envelope.protocol_version);
    scope.client_capabilities = std::move(envelope.client_capabilities);
    scope.log_level = envelope.log_level;
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    scope.protocol_version = protocol_version_;
    scope.client_capabilities = client_capabilities_;
  }
  const MethodSpec* spec = FindSpec(in.method);
  if (spec == nullptr || spec->info.notification || !spec->info.ExistsIn(scope.era) ||
      !Available(*spec)) {
    ReplyError(in.id, MethodNotFound(in.method), batch);
    return;
  }
  if (!modern && !spec->info.before_initialize && !initialized()) {
    ReplyError(in.id, InvalidRequest("server not initialized: send initialize first"), batch);
    return;
  }
  scope.method = &spec->info;
  {
    std::lock_guard<std::mutex> lock(mu_);
    scope.owner = task_owner_;
  }
  if (server_.options().metrics != nullptr) scope.received = std::chrono::steady_clock::now();
  scope.progress_token = ReadProgressToken(in.params);
  scope.traceparent = ReadTraceParent(in.params);
  const Handler handler = spec->handler;
  if (spec->info.inline_answer) {
    Answer(scope, (this->*handler)(scope, in.params));
    return;
  }
  // The rest may touch disk or user code: run them on the worker pool.
  RunAsync(scope, [scope, handler, params = std::move(in.params)](Connection& self,
                                                                  std::stop_token) mutable {
    return (self.*handler)(scope, params);
  });
}

void Connection::HandleNotification(const IncomingMessage& in) {
  const MethodSpec* spec = FindSpec(in.method);
  if (spec == nullptr || !spec->info.notification) {
    log::Debug(kLog, "ignoring notification " + in.method);
    return;
  }
  RequestScope scope;
  scope.era = HasEnvelopeClaim(in.params) ? Era::kModern : Era::kLegacy;
  scope.method = &spec->info;
  (this->*(spec->handler))(scope, in.params);
}

void Connection::HandleResponse(IncomingMessage& in) {
  std::shared_ptr<PendingRequest> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pending_out_.find(IdKey(in.id));
    if (it == pending_out_.end()) {
      log::Debug(kLog, "ignoring a response to unknown request " + in.id.dump());
      return;
    }
    pending = std::move(it->second);
    pending_out_.erase(it);
  }
  if (in.result) {
    pending->Fulfil(Result<Json>(std::move(*in.result)));
    return;
  }
  pending->Fulfil(Result<Json>(
      MakeError(ErrorCode::kFailedPrecondition, DescribeClientError(*in.response_error))));
}

void Connection::HandleCancelled(const Json& request_id) {
  bool subscription = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = in_flight_.find(IdKey(request_id));
    if (it == in_flight_.end()) return;  // unknown or already answered: ignore
    subscription = it->second.subscription;
    if (!subscription) it->second.stop.request_stop();
  }
  log::Debug(kLog, "request " + request_id.dump() + " cancelled by the client");
  if (subscription) EndSubscription(request_id, /*graceful=*/false);
}

Connection::Outcome Connection::RunTool(const RequestScope& scope, const ToolSpec& tool,
                                        AdmittedCall& call, const InputResponses& inputs,
                                        std::stop_token token) {
  const std::string& name = tool.definition.name;
  const auto started = std::chrono::steady_clock::now();
  std::optional<TraceParent> trace = ParseTraceParent(scope.traceparent);
  log::CallScope log_scope(
      {trace ? trace->trace_id : "", methods::kToolsCall, name, scope.session_id});
  CallContext context(shared_from_this(), scope, token, std::move(call.reservation), inputs);
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
    return AskForInput(scope, StateScope(methods::kToolsCall, name),
                       std::move(*result.input_required));
  }
  if (!result.is_error && !result.input_required && tool.definition.output_schema &&
      !result.structured_content) {
    log::Warn(kLog, "tool " + name + " declares an outputSchema but returned no structuredContent");
  }
  return Outcome::Of(ToolResultToJson(std::move(result)));
}

// --- asynchronous requests --------------------------------------------------------------------

bool Connection::CallerAwaitsAnswers() {
  std::shared_lock<std::shared_mutex> lock(sink_mu_);
  return sink_ != nullptr && sink_->CallerAwaitsAnswers();
}

void Connection::RunAsync(const RequestScope& scope,
                          std::function<Outcome(Connection& self, std::stop_token)> work,
                          bool quick) {
  std::stop_source stop;
  const std::string key = IdKey(scope.id);
  bool closed = false;
  bool duplicate = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed = closed_;
    duplicate = in_flight_.count(key) > 0;
    if (!closed && !duplicate)
      in_flight_.emplace(key, InFlight{scope.id, stop, scope.batch, false, std::nullopt});
  }
  if (closed) {  // nobody to answer
    if (scope.batch) BatchDone(scope.batch, std::nullopt);
    return;
  }
  if (duplicate) {
    ReplyError(scope.id, DuplicateRequestIdError(scope.id), scope.batch);
    return;
  }
  std::weak_ptr<Connection> weak = weak_from_this();
  auto task = [weak, scope, token = stop.get_token(), work = std::move(work)] {
    auto self = weak.lock();
    if (!self) return;
    std::optional<Outcome> outcome;
    if (!token.stop_requested()) {
      try {
        outcome = work(*self, token);
      } catch (const std::exception& e) {
        log::Error(kLog, std::string("request handler threw: ") + e.what());
        outcome = Outcome::Fail(InternalError(std::string("Internal error: ") + e.what()));
      }
    }
    self->FinishAsync(scope, std::move(outcome));
  };
  if (quick && !scope.batch && CallerAwaitsAnswers()) {
    task();
    return;
  }
  Status submitted = server_.pool().Submit(std::move(task));
  if (!submitted.ok()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      in_flight_.erase(key);
      if (in_flight_.empty()) idle_cv_.notify_all();
    }
    log::Warn(kLog, submitted.error().message);
    ReplyError(scope.id, InternalError(submitted.error().message), scope.batch);
  }
}

void Connection::FinishAsync(const RequestScope& scope, std::optional<Outcome> outcome) {
  const std::string key = IdKey(scope.id);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = in_flight_.find(key);
    if (it == in_flight_.end()) return;
    if (it->second.stop.stop_requested()) {  // cancelled: no response at all, or the stop's
      outcome.reset();
      if (it->second.answer_on_stop) outcome = Outcome::Fail(*it->second.answer_on_stop);
    }
  }
  // Sent before the request leaves in_flight_, so WaitIdle() also waits for the answer's write.
  if (outcome) {
    Answer(scope, std::move(*outcome));
  } else if (scope.batch) {
    BatchDone(scope.batch, std::nullopt);
  } else {
    Dropped(scope.id);
  }
  std::lock_guard<std::mutex> lock(mu_);
  in_flight_.erase(key);
  if (in_flight_.empty()) idle_cv_.notify_all();
}

void Connection::EndSubscription(const Json& id, bool graceful) {
  const std::string key = IdKey(id);
  {
    std::lock_guard<std::mutex> lock(mu_);
    bool open = listens_.erase(key) > 0;
    // Also one still being opened (acknowledged, not yet listed): Listen then leaves it closed.
    if (auto it = in_flight_.find(key); it != in_flight_.end() && it->second.subscription) {
      in_flight_.erase(it);
      open = true;
    }
    if (!open) return;
    if (in_flight_.empty()) idle_cv_.notify_all();
  }
  if (!graceful) {
    Dropped(id);
    return;
  }
  RequestScope scope;
  scope.id = id;
  scope.era = Era::kModern;
  scope.method = FindMethod(methods::kListen);
  Answer(scope, Outcome::Of(ListenEndResult(id)));
}

// --- outgoing ---------------------------------------------------------------------------------

void Connection::Measure(const RequestScope& scope, const Outcome& outcome) const {
  CoreMetrics* metrics = server_.options().metrics;
  // A scope made up to end a listen stream was never received: it has no duration.
  if (metrics == nullptr || scope.method == nullptr ||
      scope.received == std::chrono::steady_clock::time_point{}) {
    return;
  }
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - scope.received;
  std::string error_type;
  if (outcome.error) {
    error_type = std::to_string(outcome.error->code);
  } else if (!scope.tool.empty()) {
    const auto is_error = outcome.result->find("isError");
    if (is_error != outcome.result->end() && *is_error == true) error_type = kToolErrorType;
  }
  metrics->RecordOperation(scope.method->name, scope.tool, error_type, took.count());
}

void Connection::Answer(const RequestScope& scope, Outcome outcome) {
  if (!outcome.result && !outcome.error) return;  // answered later
  Measure(scope, outcome);
  if (outcome.error) {
    ReplyError(scope.id, *outcome.error, scope.batch);
    return;
  }
  Json result = std::move(*outcome.result);
  if (scope.modern()) {
    DecorateModernResult(result, scope.method ? scope.method->cache : std::nullopt,
                         server_.identity());
  }
  Json response = MakeResult(scope.id, std::move(result));
  if (scope.batch) {
    BatchDone(scope.batch, std::move(response));
    return;
  }
  OutgoingMessage message;
  message.kind = OutgoingMessage::Kind::kResponse;
  message.related_request_id = scope.id;
  message.json = DumpCompactJson(response);
  Emit(std::move(message));
}

void Connection::ReplyError(const Json& id, const RpcError& error,
                            const std::shared_ptr<Batch>& batch) {
  Json response = MakeErrorResponse(id, error, mode_ == ConnectionMode::kModernOnly);
  if (batch) {
    BatchDone(batch, std::move(response));
    return;
  }
  OutgoingMessage message;
  message.kind = OutgoingMessage::Kind::kResponse;
  if (!id.is_null()) message.related_request_id = id;
  message.json = DumpCompactJson(response);
  message.error_code = error.code;
  message.rejected_before_dispatch = error.before_dispatch;
  Emit(std::move(message));
}

void Connection::BatchDone(const std::shared_ptr<Batch>& batch, std::optional<Json> response) {
  Json answer;
  {
    std::lock_guard<std::mutex> lock(batch->mu);
    if (response) batch->responses.push_back(std::move(*response));
    if (--batch->pending > 0) return;
    answer = std::move(batch->responses);
  }
  if (!answer.empty()) {
    OutgoingMessage message;
    message.kind = OutgoingMessage::Kind::kBatchAnswer;
    message.related_request_id = batch->first_request_id;
    message.json = DumpCompactJson(answer);
    Emit(std::move(message));
  } else if (batch->first_request_id) {
    Dropped(*batch->first_request_id);
  }
}

void Connection::CloseRequestStream(const Json& request_id) {
  std::shared_lock<std::shared_mutex> lock(sink_mu_);
  if (sink_ != nullptr) sink_->CloseRequestStream(request_id);
}

void Connection::Emit(OutgoingMessage message) {
  std::shared_lock<std::shared_mutex> lock(sink_mu_);
  if (sink_ != nullptr) sink_->Send(std::move(message));
}

void Connection::Dropped(const Json& id) {
  std::shared_lock<std::shared_mutex> lock(sink_mu_);
  if (sink_ != nullptr) sink_->OnRequestDropped(id);
}

void Connection::EmitNotification(std::string_view method, Json params,
                                  const std::optional<Json>& related, bool modern) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_ || (!modern && !initialized_)) return;
  }
  OutgoingMessage message;
  message.kind = OutgoingMessage::Kind::kNotification;
  message.related_request_id = related;
  message.json = DumpCompactJson(MakeNotification(method, std::move(params)));
  Emit(std::move(message));
}

void Connection::SendLog(const RequestScope& scope, LogLevel level, const std::string& logger,
                         const Json& data) {
  if (scope.modern()) {
    // Only for a request that asked for logs, at or above its level (server/utilities/logging).
    if (!scope.log_level || level < *scope.log_level) return;
  } else if (static_cast<int>(level) < log_level_.load()) {
    return;
  }
  EmitNotification(methods::kMessage, LogMessageParams(level, logger, data), scope.id,
                   scope.modern());
}

void Connection::NotifyResourceUpdated(const std::string& uri) {
  std::vector<Json> streams;
  bool legacy = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    legacy = subscriptions_.count(uri) > 0;
    for (const auto& [key, listen] : listens_) {
      for (const std::string& wanted : listen.filter.resource_subscriptions) {
        if (wanted == uri) {
          streams.push_back(listen.id);
          break;
        }
      }
    }
  }
  if (legacy)
    EmitNotification(methods::kResourceUpdated, ResourceUpdatedParams(uri), std::nullopt,
                     /*modern=*/false);
  for (const Json& id : streams) {
    Json params = ResourceUpdatedParams(uri);
    TagSubscription(params, id);
    EmitNotification(methods::kResourceUpdated, std::move(params), id, /*modern=*/true);
  }
}

void Connection::NotifyListChanged(ListKind list) {
  const char* method = list == ListKind::kTools     ? methods::kToolListChanged
                       : list == ListKind::kPrompts ? methods::kPromptListChanged
                                                    : methods::kResourceListChanged;
  std::vector<Json> streams;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, listen] : listens_) {
      const ListenFilter& f = listen.filter;
      if ((list == ListKind::kTools && f.tools_list_changed) ||
          (list == ListKind::kPrompts && f.prompts_list_changed) ||
          (list == ListKind::kResources && f.resources_list_changed)) {
        streams.push_back(listen.id);
      }
    }
  }
  // A legacy session's capabilities declare listChanged for resources only.
  if (list == ListKind::kResources) {
    EmitNotification(method, Json::object(), std::nullopt, /*modern=*/false);
  }
  for (const Json& id : streams) {
    Json params = Json::object();
    TagSubscription(params, id);
    EmitNotification(method, std::move(params), id, /*modern=*/true);
  }
}

Result<Json> Connection::SendRequest(const std::string& method, const Json& params,
                                     const std::optional<Json>& related_request_id,
                                     std::stop_token cancel) {
  const std::string capability = ClientCapabilityFor(method);
  auto pending = std::make_shared<PendingRequest>();
  Json id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return MakeError(ErrorCode::kUnavailable, "the connection is closed");
    if (!initialized_) return MakeError(ErrorCode::kFailedPrecondition, "not initialized");
    if (!capability.empty() && !client_capabilities_.contains(capability)) {
      return MakeError(ErrorCode::kUnsupported,
                       "the client does not support " + capability + " (capability not declared)");
    }
    id = next_out_id_++;
    pending_out_.emplace(IdKey(id), pending);
  }
  OutgoingMessage message;
  message.kind = OutgoingMessage::Kind::kRequest;
  message.related_request_id = related_request_id;
  message.json = DumpCompactJson(MakeRequest(id, method, params));
  Emit(std::move(message));

  const auto deadline = std::chrono::steady_clock::now() + server_.options().client_request_timeout;
  std::optional<Error> gave_up;
  {
    // Woken by the answer, by Close(), or by a stop of `cancel`.
    std::unique_lock<std::mutex> lock(pending->mu);
    if (!pending->cv.wait_until(lock, cancel, deadline,
                                [&] { return pending->outcome.has_value(); })) {
      gave_up = cancel.stop_requested()
                    ? MakeError(ErrorCode::kCancelled, "cancelled")
                    : MakeError(ErrorCode::kDeadlineExceeded,
                                "the client did not answer " + method + " in time");
    }
  }
  if (!gave_up) return std::move(*pending->outcome);
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_out_.erase(IdKey(id));
  }
  EmitNotification(methods::kCancelled, CancelledNotificationParams(id, gave_up->message),
                   related_request_id, /*modern=*/false);
  return *gave_up;
}

// --- lifecycle and state ----------------------------------------------------------------------

void Connection::EndSubscriptions() {
  std::vector<Json> ids;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, listen] : listens_) ids.push_back(listen.id);
  }
  for (const Json& id : ids) EndSubscription(id, /*graceful=*/true);
}

void Connection::CancelAll(std::optional<RpcError> answer) {
  std::vector<Json> streams;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [key, request] : in_flight_) {
      if (request.subscription) {
        streams.push_back(request.id);
      } else {
        if (answer && !request.stop.stop_requested()) request.answer_on_stop = answer;
        request.stop.request_stop();
      }
    }
  }
  for (const Json& id : streams) EndSubscription(id, /*graceful=*/false);
}

bool Connection::WaitIdle(std::chrono::milliseconds timeout, std::stop_token stop) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_cv_.wait_for(lock, stop, timeout, [this] { return in_flight_.empty(); });
}

void Connection::Close() {
  std::map<std::string, std::shared_ptr<PendingRequest>> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    for (auto& [key, request] : in_flight_) request.stop.request_stop();
    for (const auto& [key, listen] : listens_) in_flight_.erase(key);
    listens_.clear();
    if (in_flight_.empty()) idle_cv_.notify_all();
    pending.swap(pending_out_);
  }
  for (auto& [key, request] : pending) {
    request->Fulfil(MakeError(ErrorCode::kUnavailable, "the connection closed"));
  }
  std::unique_lock<std::shared_mutex> lock(sink_mu_);  // waits for sends in progress
  sink_ = nullptr;
}

bool Connection::initialized() const {
  std::lock_guard<std::mutex> lock(mu_);
  return initialized_;
}

std::string Connection::protocol_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return protocol_version_;
}

size_t Connection::InFlightCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_.size();
}

bool Connection::IsSubscribed(const std::string& uri) const {
  std::lock_guard<std::mutex> lock(mu_);
  return subscriptions_.count(uri) > 0;
}

void Connection::SetTaskOwner(std::string owner) {
  std::lock_guard<std::mutex> lock(mu_);
  task_owner_ = std::move(owner);
}

}  // namespace imgmcp::mcp
