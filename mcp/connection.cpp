#include "mcp/connection.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <utility>

#include "common/log.h"
#include "common/trace_context.h"
#include "mcp/log_tag.h"
#include "mcp/method_handlers.h"
#include "mcp/server.h"

namespace imgmcp::mcp {

namespace {

// Records the answered request in the server's metrics, when they are on.
void MeasureOperation(CoreMetrics* metrics, const RequestScope& scope, const Outcome& outcome) {
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

}  // namespace

Connection::Connection(McpServer& server, MessageSink& sink, ConnectionMode mode)
    : server_(server),
      mode_(mode),
      session_(server.options().default_client_log_level),
      rpc_(sink, *this, /*omit_null_ids=*/mode == ConnectionMode::kModernOnly) {}

Connection::~Connection() { Close(); }

// --- incoming -------------------------------------------------------------------------------

void Connection::HandleMessage(std::string_view text) { rpc_.Receive(text); }

void Connection::HandleJson(Json message) { rpc_.Receive(std::move(message)); }

std::optional<RpcError> Connection::CheckBatch(const Json& batch) const {
  if (batch.empty()) return InvalidRequest("empty batch");
  if (mode_ == ConnectionMode::kModernOnly) {
    return InvalidRequest("batches are not part of protocol revision 2026-07-28");
  }
  if (!session_.initialized()) return InvalidRequest("batches are not allowed before initialize");
  const std::string version = session_.protocol_version();
  if (!BatchesAllowed(version)) {
    return InvalidRequest("batches are not supported in protocol version " + version);
  }
  return std::nullopt;
}

std::optional<RpcError> Connection::ReadScope(const IncomingMessage& in,
                                              RequestScope& scope) const {
  const bool modern = mode_ == ConnectionMode::kModernOnly || HasEnvelopeClaim(in.params);
  if (!modern) {
    session_.ReadContext(&scope.protocol_version, &scope.client_capabilities);
    return std::nullopt;
  }
  if (scope.batch) {
    return InvalidRequest("a batch cannot carry requests of protocol revision 2026-07-28");
  }
  ModernEnvelope envelope;
  if (auto error = ReadModernEnvelope(in.params, &envelope)) return error;
  scope.era = Era::kModern;
  scope.protocol_version = std::move(envelope.protocol_version);
  scope.client_capabilities = std::move(envelope.client_capabilities);
  scope.log_level = envelope.log_level;
  return std::nullopt;
}

void Connection::HandleRequest(IncomingMessage& in, const std::shared_ptr<RpcBatch>& batch) {
  RequestScope scope;
  scope.id = in.id;
  scope.batch = batch;
  if (auto error = ReadScope(in, scope)) {
    rpc_.ReplyError(in.id, *error, batch);
    return;
  }
  const MethodSpec* spec = FindMethodSpec(in.method);
  if (spec == nullptr || spec->info.notification || !spec->info.ExistsIn(scope.era) ||
      (spec->info.capability != nullptr && !(server_.capabilities().*spec->info.capability))) {
    rpc_.ReplyError(in.id, MethodNotFound(in.method), batch);
    return;
  }
  if (!scope.modern() && !spec->info.before_initialize && !initialized()) {
    rpc_.ReplyError(in.id, InvalidRequest("server not initialized: send initialize first"), batch);
    return;
  }
  scope.method = &spec->info;
  scope.caller = session_.caller();
  if (server_.options().metrics != nullptr) scope.received = std::chrono::steady_clock::now();
  scope.progress_token = ReadProgressToken(in.params);
  scope.traceparent = ReadTraceParent(in.params);
  const MethodHandler handler = spec->handler;
  if (spec->info.inline_answer) {
    Answer(scope, handler(*this, scope, in.params));
    return;
  }
  // The rest may touch disk or user code: run them on the worker pool.
  RunAsync(scope,
           [scope, handler, params = std::move(in.params)](
               Connection& self, std::stop_token) mutable { return handler(self, scope, params); });
}

void Connection::HandleNotification(const IncomingMessage& in) {
  const MethodSpec* spec = FindMethodSpec(in.method);
  if (spec == nullptr || !spec->info.notification) {
    log::Debug(kLog, "ignoring notification " + in.method);
    return;
  }
  RequestScope scope;
  scope.era = HasEnvelopeClaim(in.params) ? Era::kModern : Era::kLegacy;
  scope.method = &spec->info;
  spec->handler(*this, scope, in.params);
}

// --- asynchronous requests --------------------------------------------------------------------

void Connection::RunAsync(const RequestScope& scope,
                          std::function<Outcome(Connection& self, std::stop_token)> work,
                          bool quick) {
  std::stop_source stop;
  switch (rpc_.Begin(scope.id, scope.batch, /*stream=*/false, stop)) {
    case JsonRpcConnection::Admission::kAdmitted:
      break;
    case JsonRpcConnection::Admission::kClosed:  // nobody to answer
      if (scope.batch) rpc_.NoAnswer(scope.id, scope.batch);
      return;
    case JsonRpcConnection::Admission::kDuplicate:
      rpc_.ReplyError(scope.id, DuplicateRequestIdError(scope.id), scope.batch);
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
  if (quick && !scope.batch && rpc_.CallerAwaitsAnswers()) {
    task();
    return;
  }
  Status submitted = server_.pool().Submit(std::move(task));
  if (!submitted.ok()) {
    rpc_.End(scope.id);
    log::Warn(kLog, submitted.error().message);
    rpc_.ReplyError(scope.id, InternalError(submitted.error().message), scope.batch);
  }
}

void Connection::FinishAsync(const RequestScope& scope, std::optional<Outcome> outcome) {
  const JsonRpcConnection::Verdict verdict = rpc_.Check(scope.id);
  if (!verdict.known) return;
  if (verdict.stopped) {  // cancelled: no response at all, or the stop's
    outcome.reset();
    if (verdict.replacement) outcome = Outcome::Fail(*verdict.replacement);
  }
  // Sent before the request stops being in flight, so WaitIdle() also waits for the answer's write.
  if (outcome) {
    Answer(scope, std::move(*outcome));
  } else {
    rpc_.NoAnswer(scope.id, scope.batch);
  }
  rpc_.End(scope.id);
}

void Connection::EndSubscription(const Json& id, bool graceful) {
  if (!session_.RemoveListen(id, [this, &id] { return rpc_.EndStream(id); })) return;
  if (!graceful) {
    rpc_.NoAnswer(id, nullptr);
    return;
  }
  RequestScope scope;
  scope.id = id;
  scope.era = Era::kModern;
  scope.method = FindMethod(methods::kListen);
  Answer(scope, Outcome::Of(ListenEndResult(id)));
}

// --- outgoing ---------------------------------------------------------------------------------

void Connection::Answer(const RequestScope& scope, Outcome outcome) {
  if (!outcome.result && !outcome.error) return;  // answered later
  MeasureOperation(server_.options().metrics, scope, outcome);
  if (outcome.error) {
    rpc_.ReplyError(scope.id, *outcome.error, scope.batch);
    return;
  }
  Json result = std::move(*outcome.result);
  if (scope.modern()) {
    DecorateModernResult(result, scope.method ? scope.method->cache : std::nullopt,
                         server_.identity());
  }
  rpc_.Respond(scope.id, std::move(result), scope.batch);
}

void Connection::CloseRequestStream(const Json& request_id) { rpc_.CloseRequestStream(request_id); }

void Connection::EmitNotification(std::string_view method, Json params,
                                  const std::optional<Json>& related, bool modern) {
  if (!modern && !session_.initialized()) return;
  rpc_.Notify(method, std::move(params), related);
}

void Connection::SendLog(const RequestScope& scope, LogLevel level, const std::string& logger,
                         const Json& data) {
  if (scope.modern()) {
    // Only for a request that asked for logs, at or above its level (server/utilities/logging).
    if (!scope.log_level || level < *scope.log_level) return;
  } else if (!session_.Logs(level)) {
    return;
  }
  EmitNotification(methods::kMessage, LogMessageParams(level, logger, data), scope.id,
                   scope.modern());
}

void Connection::NotifyResourceUpdated(const std::string& uri, const std::string& principal) {
  if (session_.caller().principal != principal) return;
  const std::vector<Json> streams = session_.ListensWanting([&uri](const ListenFilter& filter) {
    const auto& wanted = filter.resource_subscriptions;
    return std::find(wanted.begin(), wanted.end(), uri) != wanted.end();
  });
  if (session_.IsSubscribed(uri)) {
    EmitNotification(methods::kResourceUpdated, ResourceUpdatedParams(uri), std::nullopt,
                     /*modern=*/false);
  }
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
  const std::vector<Json> streams = session_.ListensWanting([list](const ListenFilter& f) {
    return (list == ListKind::kTools && f.tools_list_changed) ||
           (list == ListKind::kPrompts && f.prompts_list_changed) ||
           (list == ListKind::kResources && f.resources_list_changed);
  });
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
  if (!session_.initialized()) return MakeError(ErrorCode::kFailedPrecondition, "not initialized");
  const std::string capability = ClientCapabilityFor(method);
  if (!capability.empty() && !session_.ClientDeclares(capability)) {
    return MakeError(ErrorCode::kUnsupported,
                     "the client does not support " + capability + " (capability not declared)");
  }
  return rpc_.Call(method, params, related_request_id, server_.options().client_request_timeout,
                   std::move(cancel));
}

// --- lifecycle and state ----------------------------------------------------------------------

void Connection::EndSubscriptions() {
  for (const Json& id : session_.ListenIds()) EndSubscription(id, /*graceful=*/true);
}

void Connection::CancelAll(const std::optional<RpcError>& answer) {
  for (const Json& id : rpc_.CancelAll(answer)) EndSubscription(id, /*graceful=*/false);
}

bool Connection::WaitIdle(std::chrono::milliseconds timeout, std::stop_token stop) {
  return rpc_.WaitIdle(timeout, std::move(stop));
}

void Connection::Close() {
  rpc_.Close();  // first: a listen stream added from now on finds its request gone
  session_.ClearListens();
}

bool Connection::initialized() const { return session_.initialized(); }

std::string Connection::protocol_version() const { return session_.protocol_version(); }

size_t Connection::InFlightCount() const { return rpc_.InFlightCount(); }

bool Connection::IsSubscribed(const std::string& uri) const { return session_.IsSubscribed(uri); }

void Connection::SetCaller(Caller caller) { session_.SetCaller(std::move(caller)); }

}  // namespace imgmcp::mcp
