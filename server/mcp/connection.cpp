#include "server/mcp/connection.h"

#include <cmath>
#include <exception>
#include <limits>
#include <utility>

#include "common/log.h"
#include "server/mcp/log_level.h"
#include "server/mcp/pagination.h"
#include "server/mcp/protocol_version.h"
#include "server/mcp/server.h"

namespace imgmcp::mcp {

namespace {

constexpr char kLog[] = "mcp";

RpcError InvalidRequest(std::string message) {
  return {rpc_error::kInvalidRequest, "Invalid Request: " + std::move(message), std::nullopt};
}
RpcError InvalidParams(std::string message) {
  return {rpc_error::kInvalidParams, std::move(message), std::nullopt};
}

// Methods this core implements (answered -32600 before initialize; others are -32601).
bool IsCoreMethod(const std::string& m) {
  return m == "tools/list" || m == "tools/call" || m == "resources/list" ||
         m == "resources/templates/list" || m == "resources/read" || m == "resources/subscribe" ||
         m == "resources/unsubscribe" || m == "prompts/list" || m == "prompts/get" ||
         m == "completion/complete" || m == "logging/setLevel";
}

// params._meta.progressToken when it is a string or an integer.
std::optional<Json> ReadProgressToken(const Json& params) {
  auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return std::nullopt;
  auto token = meta->find("progressToken");
  if (token == meta->end() || !IsValidId(*token)) return std::nullopt;
  return *token;
}

// A number as JSON: integral values as integers ("50", not "50.0").
Json NumberJson(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.0e15) {
    return static_cast<int64_t>(v);
  }
  return v;
}

Json ListResult(const char* key, Json items, const std::optional<std::string>& next_cursor) {
  Json result = Json::object();
  result[key] = std::move(items);
  if (next_cursor) result["nextCursor"] = *next_cursor;
  return result;
}

// What a running tools/call can do towards its client (see tool.h). Lives on the worker thread
// for the duration of the handler.
class CallContext final : public ToolCallContext {
 public:
  CallContext(std::shared_ptr<Connection> connection, Json request_id,
              std::optional<Json> progress_token, CancellationToken token, std::string version,
              std::unique_ptr<CallReservation> reservation)
      : connection_(std::move(connection)),
        request_id_(std::move(request_id)),
        progress_token_(std::move(progress_token)),
        token_(std::move(token)),
        version_(std::move(version)),
        reservation_(std::move(reservation)) {}

  bool HasProgressToken() const override { return progress_token_.has_value(); }

  void ReportProgress(double progress, std::optional<double> total,
                      const std::string& message) override {
    if (!progress_token_) return;
    // Held while sending so notifications leave in order and none after MarkDone.
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    if (last_progress_ && !(progress > *last_progress_)) {
      progress = std::nextafter(*last_progress_, std::numeric_limits<double>::infinity());
    }
    last_progress_ = progress;
    Json params = Json::object();
    params["progressToken"] = *progress_token_;
    params["progress"] = NumberJson(progress);
    if (total) params["total"] = NumberJson(*total);
    if (!message.empty()) params["message"] = message;
    connection_->SendNotification("notifications/progress", std::move(params), request_id_);
  }

  void Log(LogLevel level, const std::string& logger, const Json& data) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    connection_->SendLog(level, logger, data, request_id_);
  }

  std::optional<Json> ProgressToken() const override { return progress_token_; }
  // Called only by the handler, on the worker thread that owns this context.
  std::unique_ptr<CallReservation> TakeReservation() override { return std::move(reservation_); }
  void CloseStream() override { connection_->CloseRequestStream(request_id_); }
  const CancellationToken& Cancellation() const override { return token_; }
  std::string ProtocolVersion() const override { return version_; }

  Result<Json> SendRequest(const std::string& method, const Json& params) override {
    return connection_->SendRequest(method, params, request_id_, token_);
  }

  // After this nothing more is sent on behalf of the call (its response follows).
  void MarkDone() {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }

 private:
  const std::shared_ptr<Connection> connection_;
  const Json request_id_;
  const std::optional<Json> progress_token_;
  const CancellationToken token_;
  const std::string version_;
  std::mutex mu_;  // guards done_ and last_progress_, and orders this call's notifications
  bool done_ = false;
  std::optional<double> last_progress_;
  std::unique_ptr<CallReservation> reservation_;  // owned by the worker thread; no lock needed
};

}  // namespace

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
  std::condition_variable cv;
  std::optional<Result<Json>> outcome;

  void Fulfil(Result<Json> result) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!outcome) outcome.emplace(std::move(result));
    }
    cv.notify_all();
  }
};

Connection::Connection(McpServer& server, MessageSink& sink)
    : server_(server),
      sink_(&sink),
      log_level_(static_cast<int>(server.options().default_client_log_level)) {}

Connection::~Connection() { Close(); }

// --- incoming -------------------------------------------------------------------------------

void Connection::HandleMessage(std::string_view text) {
  ParsedMessage parsed = ParseMessageText(text);
  if (parsed.error) {
    Emit(MakeErrorResponse(nullptr, *parsed.error), std::nullopt);
    return;
  }
  HandleJson(std::move(parsed.message));
}

void Connection::HandleJson(Json message) {
  try {
    if (NestsDeeperThan(message, kMaxJsonNestingDepth)) {
      Json id = nullptr;
      if (message.is_object()) {
        auto it = message.find("id");
        if (it != message.end() && IsValidId(*it)) id = *it;
      }
      ReplyError(id, InvalidRequest(TooDeepMessage()), nullptr);
      return;
    }
    if (!message.is_array()) {
      ProcessOne(std::move(message), nullptr);
      return;
    }
    std::string version;
    bool initialized = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      version = protocol_version_;
      initialized = initialized_;
    }
    if (message.empty()) {
      ReplyError(nullptr, InvalidRequest("empty batch"), nullptr);
      return;
    }
    if (!initialized || !BatchesAllowed(version)) {
      ReplyError(
          nullptr,
          InvalidRequest(initialized ? "batches are not supported in protocol version " + version
                                     : "batches are not allowed before initialize"),
          nullptr);
      return;
    }
    auto batch = std::make_shared<Batch>();
    for (const Json& element : message) {
      if (element.is_object() && element.contains("method") && element.contains("id") &&
          IsValidId(element["id"])) {
        batch->first_request_id = element["id"];
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
    Emit(MakeErrorResponse(nullptr, {rpc_error::kInternalError, "Internal error", std::nullopt}),
         std::nullopt);
  }
}

void Connection::ProcessOne(Json message, const std::shared_ptr<Batch>& batch) {
  if (!message.is_object()) {
    ReplyError(nullptr, InvalidRequest("a message must be a JSON object"), batch);
    return;
  }
  Json id = nullptr;
  const auto id_it = message.find("id");
  const bool has_id = id_it != message.end();
  if (has_id && IsValidId(*id_it)) id = *id_it;
  const auto version_it = message.find("jsonrpc");
  const bool version_ok = version_it != message.end() && *version_it == "2.0";
  const auto method_it = message.find("method");

  if (method_it == message.end()) {
    if (message.contains("result") || message.contains("error")) {
      if (version_ok && !id.is_null()) HandleResponse(message);
      if (batch) BatchDone(batch, std::nullopt);
      return;
    }
    ReplyError(id, InvalidRequest("missing \"method\""), batch);
    return;
  }
  if (!version_ok) {
    ReplyError(id, InvalidRequest("\"jsonrpc\" must be \"2.0\""), batch);
    return;
  }
  if (!method_it->is_string()) {
    ReplyError(id, InvalidRequest("\"method\" must be a string"), batch);
    return;
  }
  std::string method = method_it->get<std::string>();
  Json params = Json::object();
  bool params_ok = true;
  if (auto p = message.find("params"); p != message.end() && !p->is_null()) {
    params_ok = p->is_object();
    if (params_ok) params = std::move(*p);
  }
  if (!has_id) {  // a notification: never answered
    if (params_ok) HandleNotification(method, params);
    if (batch) BatchDone(batch, std::nullopt);
    return;
  }
  if (id.is_null()) {
    ReplyError(nullptr, InvalidRequest("\"id\" must be a string or an integer"), batch);
    return;
  }
  if (!params_ok) {
    ReplyError(id, InvalidParams("params must be an object"), batch);
    return;
  }
  HandleRequest(id, method, std::move(params), batch);
}

void Connection::HandleRequest(const Json& id, const std::string& method, Json params,
                               const std::shared_ptr<Batch>& batch) {
  if (method == "initialize") {
    Reply(id, Initialize(id, params), batch);
    return;
  }
  if (method == "ping") {
    Reply(id, MakeResult(id, Json::object()), batch);
    return;
  }
  const bool has_prompts = !server_.prompts().empty();
  const bool has_completion = static_cast<bool>(server_.completion_handler());
  const bool known = IsCoreMethod(method) && !(method.rfind("prompts/", 0) == 0 && !has_prompts) &&
                     !(method == "completion/complete" && !has_completion);
  if (!known) {
    ReplyError(id, {rpc_error::kMethodNotFound, "Method not found: " + method, std::nullopt},
               batch);
    return;
  }
  if (!initialized()) {
    ReplyError(id, InvalidRequest("server not initialized: send initialize first"), batch);
    return;
  }

  if (method == "tools/call") {
    StartToolCall(id, std::move(params), batch);
    return;
  }
  if (method == "logging/setLevel") {
    Reply(id, SetLogLevel(id, params), batch);
    return;
  }
  if (method == "resources/subscribe" || method == "resources/unsubscribe") {
    Reply(id, Subscribe(id, params, method == "resources/subscribe"), batch);
    return;
  }
  if (method == "resources/templates/list") {
    Reply(id, MakeResult(id, server_.ListResourceTemplates()), batch);
    return;
  }

  auto cursor = CursorParam(params);
  if (!cursor.ok()) {
    ReplyError(id, InvalidParams(cursor.error().message), batch);
    return;
  }
  if (method == "tools/list") {
    auto page = server_.tools().List(cursor.value(), server_.options().page_size);
    if (!page.ok()) return ReplyError(id, InvalidParams(page.error().message), batch);
    Reply(id, MakeResult(id, ListResult("tools", std::move(page->tools), page->next_cursor)),
          batch);
    return;
  }
  if (method == "prompts/list") {
    auto page = server_.prompts().List(cursor.value(), server_.options().page_size);
    if (!page.ok()) return ReplyError(id, InvalidParams(page.error().message), batch);
    Reply(id, MakeResult(id, ListResult("prompts", std::move(page->prompts), page->next_cursor)),
          batch);
    return;
  }

  // The rest may touch disk or user code: run them on the worker pool.
  McpServer& server = server_;
  if (method == "resources/list") {
    RunAsync(id, batch, [&server, id, cursor = cursor.value()](const CancellationToken&) {
      auto page = server.ListResources(cursor);
      if (!page.ok()) return MakeErrorResponse(id, ToRpcError(page.error()));
      return MakeResult(id, std::move(page.value()));
    });
    return;
  }
  if (method == "resources/read") {
    auto uri = params.find("uri");
    if (uri == params.end() || !uri->is_string()) {
      ReplyError(id, InvalidParams("resources/read needs params.uri (string)"), batch);
      return;
    }
    RunAsync(id, batch, [&server, id, uri = uri->get<std::string>()](const CancellationToken&) {
      auto contents = server.ReadResource(uri);
      if (contents.ok()) return MakeResult(id, std::move(contents.value()));
      RpcError error = ToRpcError(contents.error());
      if (error.code == rpc_error::kResourceNotFound) {
        error.message = "Resource not found: " + uri;
        error.data = Json{{"uri", uri}};
      }
      return MakeErrorResponse(id, error);
    });
    return;
  }
  if (method == "prompts/get") {
    auto name = params.find("name");
    if (name == params.end() || !name->is_string()) {
      ReplyError(id, InvalidParams("prompts/get needs params.name (string)"), batch);
      return;
    }
    Json arguments = Json::object();
    if (auto a = params.find("arguments"); a != params.end() && !a->is_null()) arguments = *a;
    RunAsync(id, batch,
             [&server, id, name = name->get<std::string>(),
              arguments = std::move(arguments)](const CancellationToken&) {
               auto result = server.prompts().Get(name, arguments);
               if (result.ok()) return MakeResult(id, std::move(result.value()));
               const bool caller_error = result.error().code == ErrorCode::kNotFound ||
                                         result.error().code == ErrorCode::kInvalidArgument;
               return MakeErrorResponse(
                   id, {caller_error ? rpc_error::kInvalidParams : rpc_error::kInternalError,
                        result.error().message, std::nullopt});
             });
    return;
  }
  if (method == "completion/complete") {
    RunAsync(id, batch, [&server, id, params = std::move(params)](const CancellationToken&) {
      auto completion = server.completion_handler()(params);
      if (!completion.ok()) {
        const bool caller_error = completion.error().code == ErrorCode::kNotFound ||
                                  completion.error().code == ErrorCode::kInvalidArgument;
        return MakeErrorResponse(
            id, {caller_error ? rpc_error::kInvalidParams : rpc_error::kInternalError,
                 completion.error().message, std::nullopt});
      }
      Json result = Json::object();
      result["completion"] = std::move(completion.value());
      return MakeResult(id, std::move(result));
    });
    return;
  }
  ReplyError(id, {rpc_error::kMethodNotFound, "Method not found: " + method, std::nullopt}, batch);
}

Json Connection::Initialize(const Json& id, const Json& params) {
  auto requested = params.find("protocolVersion");
  if (requested == params.end() || !requested->is_string()) {
    return MakeErrorResponse(id, InvalidParams("initialize needs params.protocolVersion (string)"));
  }
  const std::string version = NegotiateProtocolVersion(requested->get<std::string>());
  const Json client_info = params.contains("clientInfo") ? params["clientInfo"] : Json();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (initialized_) {
      return MakeErrorResponse(id, InvalidRequest("server already initialized"));
    }
    initialized_ = true;
    protocol_version_ = version;
    auto caps = params.find("capabilities");
    if (caps != params.end() && caps->is_object()) client_capabilities_ = *caps;
  }
  auto info_field = [&client_info](const char* key) {
    if (!client_info.is_object() || !client_info.contains(key)) return std::string("?");
    const Json& v = client_info[key];
    return v.is_string() ? v.get<std::string>() : v.dump();
  };
  const std::string client = info_field("name") + " " + info_field("version");
  log::Info(kLog, "initialize from " + client + ": requested " + requested->dump() + ", speaking " +
                      version);

  const ServerOptions& options = server_.options();
  Json server_info = Json::object();
  server_info["name"] = options.name;
  if (!options.title.empty()) server_info["title"] = options.title;
  server_info["version"] = options.version;
  Json result = Json::object();
  result["protocolVersion"] = version;
  result["capabilities"] = server_.Capabilities();
  result["serverInfo"] = std::move(server_info);
  if (!options.instructions.empty()) result["instructions"] = options.instructions;
  return MakeResult(id, std::move(result));
}

Json Connection::SetLogLevel(const Json& id, const Json& params) {
  auto level = params.find("level");
  std::optional<LogLevel> parsed;
  if (level != params.end() && level->is_string())
    parsed = ParseLogLevel(level->get<std::string>());
  if (!parsed) {
    return MakeErrorResponse(
        id, InvalidParams("Invalid log level" +
                          (level == params.end() ? std::string() : ": " + level->dump()) +
                          "; use debug, info, notice, warning, error, critical, alert or "
                          "emergency"));
  }
  log_level_.store(static_cast<int>(*parsed));
  return MakeResult(id, Json::object());
}

Json Connection::Subscribe(const Json& id, const Json& params, bool subscribe) {
  auto uri = params.find("uri");
  if (uri == params.end() || !uri->is_string()) {
    return MakeErrorResponse(id, InvalidParams("params.uri (string) is required"));
  }
  // A URI no provider could ever serve is refused, not silently watched forever.
  if (subscribe && !server_.HandlesResource(uri->get<std::string>())) {
    std::string shown = uri->get<std::string>();
    if (shown.size() > 200) shown = shown.substr(0, 200) + "…";
    return MakeErrorResponse(id, InvalidParams("Unknown resource URI: " + Json(shown).dump() +
                                               " (see resources/templates/list)"));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (subscribe) {
      subscriptions_.insert(uri->get<std::string>());
    } else {
      subscriptions_.erase(uri->get<std::string>());
    }
  }
  return MakeResult(id, Json::object());
}

void Connection::StartToolCall(const Json& id, Json params, const std::shared_ptr<Batch>& batch) {
  auto name_it = params.find("name");
  if (name_it == params.end() || !name_it->is_string()) {
    ReplyError(id, InvalidParams("tools/call needs params.name (string)"), batch);
    return;
  }
  const std::string name = name_it->get<std::string>();
  const ToolSpec* tool = server_.tools().Find(name);
  if (tool == nullptr) {
    ReplyError(id, InvalidParams("Unknown tool: " + name), batch);
    return;
  }
  Json arguments = Json::object();
  if (auto a = params.find("arguments"); a != params.end() && !a->is_null()) {
    if (!a->is_object()) {
      ReplyError(id, InvalidParams("tools/call params.arguments must be an object"), batch);
      return;
    }
    arguments = std::move(*a);
  }
  std::optional<Json> progress_token = ReadProgressToken(params);
  std::weak_ptr<Connection> weak = weak_from_this();
  std::string version = protocol_version();
  // Arrival order is decided here, on the reading thread, before the call waits for a worker:
  // the arguments are parsed and the tool's admission reserves what it needs.
  auto call = std::make_shared<AdmittedCall>(tool->admit(std::move(arguments)));
  RunAsync(
      id, batch,
      [weak, tool, id, progress_token, version, call](const CancellationToken& token) -> Json {
        auto self = weak.lock();  // alive: the pool task holds it for the call
        if (!self) return MakeResult(id, Json::object());
        CallContext context(self, id, progress_token, token, version, std::move(call->reservation));
        ToolResult result;
        try {
          result = call->run(context);
        } catch (const std::exception& e) {  // tool bug: still an answer, not a crash
          log::Error(kLog, "tool " + tool->definition.name + " threw: " + e.what());
          result = ToolResult::ErrorText("Tool " + tool->definition.name + " failed: " + e.what());
        } catch (...) {
          result = ToolResult::ErrorText("Tool " + tool->definition.name + " failed");
        }
        context.MarkDone();
        if (!result.is_error && tool->definition.output_schema && !result.structured_content) {
          log::Warn(kLog, "tool " + tool->definition.name +
                              " declares an outputSchema but returned no structuredContent");
        }
        return MakeResult(id, ToolResultToJson(std::move(result)));
      },
      tool->definition.quick);
}

void Connection::HandleNotification(const std::string& method, const Json& params) {
  if (method == "notifications/cancelled") {
    auto request_id = params.find("requestId");
    if (request_id == params.end() || !IsValidId(*request_id)) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = in_flight_.find(IdKey(*request_id));
    if (it == in_flight_.end()) return;  // unknown or already answered: ignore
    it->second.token.Cancel();
    log::Debug(kLog, "request " + request_id->dump() + " cancelled by the client");
    return;
  }
  if (method == "notifications/initialized") {
    log::Debug(kLog, "client sent notifications/initialized");
    return;
  }
  log::Debug(kLog, "ignoring notification " + method);
}

void Connection::HandleResponse(const Json& message) {
  std::shared_ptr<PendingRequest> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pending_out_.find(IdKey(message["id"]));
    if (it == pending_out_.end()) {
      log::Debug(kLog, "ignoring a response to unknown request " + message["id"].dump());
      return;
    }
    pending = std::move(it->second);
    pending_out_.erase(it);
  }
  if (auto result = message.find("result"); result != message.end()) {
    pending->Fulfil(Result<Json>(*result));
    return;
  }
  const Json& error = message["error"];
  std::string text = "client answered with an error";
  if (error.is_object()) {
    if (error.contains("code")) text += " " + error["code"].dump();
    if (error.contains("message")) {
      const Json& m = error["message"];
      text += ": " + (m.is_string() ? m.get<std::string>() : m.dump());
    }
  }
  pending->Fulfil(Result<Json>(MakeError(ErrorCode::kFailedPrecondition, text)));
}

// --- asynchronous requests --------------------------------------------------------------------

bool Connection::CallerAwaitsAnswers() {
  std::shared_lock<std::shared_mutex> lock(sink_mu_);
  return sink_ != nullptr && sink_->CallerAwaitsAnswers();
}

void Connection::RunAsync(const Json& id, const std::shared_ptr<Batch>& batch,
                          std::function<Json(const CancellationToken&)> work, bool quick) {
  CancellationToken token;
  const std::string key = IdKey(id);
  bool closed = false;
  bool duplicate = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed = closed_;
    duplicate = in_flight_.count(key) > 0;
    if (!closed && !duplicate) in_flight_.emplace(key, InFlight{id, token, batch});
  }
  if (closed) {  // nobody to answer
    if (batch) BatchDone(batch, std::nullopt);
    return;
  }
  if (duplicate) {
    ReplyError(id, InvalidRequest("duplicate request id " + id.dump() + " is still in progress"),
               batch);
    return;
  }
  std::weak_ptr<Connection> weak = weak_from_this();
  auto task = [weak, id, token, work = std::move(work)] {
    auto self = weak.lock();
    if (!self) return;
    std::optional<Json> response;
    if (!token.IsCancelled()) {
      try {
        response = work(token);
      } catch (const std::exception& e) {
        log::Error(kLog, std::string("request handler threw: ") + e.what());
        response = MakeErrorResponse(
            id,
            {rpc_error::kInternalError, std::string("Internal error: ") + e.what(), std::nullopt});
      }
    }
    self->FinishAsync(id, std::move(response));
  };
  if (quick && !batch && CallerAwaitsAnswers()) {
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
    ReplyError(id, {rpc_error::kInternalError, submitted.error().message, std::nullopt}, batch);
  }
}

void Connection::FinishAsync(const Json& id, std::optional<Json> response) {
  const std::string key = IdKey(id);
  std::shared_ptr<Batch> batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = in_flight_.find(key);
    if (it == in_flight_.end()) return;
    batch = it->second.batch;
    if (it->second.token.IsCancelled()) response.reset();  // cancelled: no response at all
  }
  // Sent before the request leaves in_flight_, so WaitIdle() also waits for the answer's write.
  if (batch) {
    BatchDone(batch, std::move(response));
  } else if (response) {
    Emit(*response, id);
  } else {
    Dropped(id);
  }
  std::lock_guard<std::mutex> lock(mu_);
  in_flight_.erase(key);
  if (in_flight_.empty()) idle_cv_.notify_all();
}

// --- outgoing ---------------------------------------------------------------------------------

void Connection::Reply(const Json& id, Json response, const std::shared_ptr<Batch>& batch) {
  if (batch) {
    BatchDone(batch, std::move(response));
  } else {
    Emit(response, id.is_null() ? std::nullopt : std::optional<Json>(id));
  }
}

void Connection::ReplyError(const Json& id, const RpcError& error,
                            const std::shared_ptr<Batch>& batch) {
  Reply(id, MakeErrorResponse(id, error), batch);
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
    Emit(answer, batch->first_request_id);
  } else if (batch->first_request_id) {
    Dropped(*batch->first_request_id);
  }
}

void Connection::CloseRequestStream(const Json& request_id) {
  std::shared_lock<std::shared_mutex> lock(sink_mu_);
  if (sink_ != nullptr) sink_->CloseRequestStream(request_id);
}

void Connection::Emit(const Json& message, const std::optional<Json>& related_request_id) {
  std::shared_lock<std::shared_mutex> lock(sink_mu_);
  if (sink_ != nullptr) sink_->Send(message, related_request_id);
}

void Connection::Dropped(const Json& id) {
  std::shared_lock<std::shared_mutex> lock(sink_mu_);
  if (sink_ != nullptr) sink_->OnRequestDropped(id);
}

void Connection::SendNotification(std::string_view method, Json params,
                                  const std::optional<Json>& related_request_id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!initialized_ || closed_) return;
  }
  Emit(MakeNotification(method, std::move(params)), related_request_id);
}

void Connection::SendLog(LogLevel level, const std::string& logger, const Json& data,
                         const std::optional<Json>& related_request_id) {
  if (static_cast<int>(level) < log_level_.load()) return;
  Json params = Json::object();
  params["level"] = LogLevelName(level);
  if (!logger.empty()) params["logger"] = logger;
  params["data"] = data;
  SendNotification("notifications/message", std::move(params), related_request_id);
}

void Connection::NotifyResourceUpdated(const std::string& uri) {
  if (!IsSubscribed(uri)) return;
  Json params = Json::object();
  params["uri"] = uri;
  SendNotification("notifications/resources/updated", std::move(params));
}

Result<Json> Connection::SendRequest(const std::string& method, const Json& params,
                                     const std::optional<Json>& related_request_id,
                                     const CancellationToken& cancel) {
  const std::string capability = method.substr(0, method.find('/'));
  auto pending = std::make_shared<PendingRequest>();
  Json id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return MakeError(ErrorCode::kUnavailable, "the connection is closed");
    if (!initialized_) return MakeError(ErrorCode::kFailedPrecondition, "not initialized");
    if ((capability == "sampling" || capability == "elicitation" || capability == "roots") &&
        !client_capabilities_.contains(capability)) {
      return MakeError(ErrorCode::kUnsupported,
                       "the client does not support " + capability + " (capability not declared)");
    }
    id = next_out_id_++;
    pending_out_.emplace(IdKey(id), pending);
  }
  Emit(MakeRequest(id, method, params), related_request_id);

  const auto deadline = std::chrono::steady_clock::now() + server_.options().client_request_timeout;
  std::optional<Error> gave_up;
  {
    std::unique_lock<std::mutex> lock(pending->mu);
    while (!pending->outcome) {
      if (cancel.IsCancelled()) {
        gave_up = MakeError(ErrorCode::kCancelled, "cancelled");
        break;
      }
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) {
        gave_up = MakeError(ErrorCode::kDeadlineExceeded,
                            "the client did not answer " + method + " in time");
        break;
      }
      // Wakes on the answer; the bounded wait re-checks the cancellation token.
      pending->cv.wait_for(lock, std::min<std::chrono::steady_clock::duration>(
                                     deadline - now, std::chrono::milliseconds(50)));
    }
  }
  if (!gave_up) return std::move(*pending->outcome);
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_out_.erase(IdKey(id));
  }
  Json cancel_params = Json::object();
  cancel_params["requestId"] = id;
  cancel_params["reason"] = gave_up->message;
  SendNotification("notifications/cancelled", std::move(cancel_params), related_request_id);
  return *gave_up;
}

// --- lifecycle and state ----------------------------------------------------------------------

void Connection::CancelAll() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [key, request] : in_flight_) request.token.Cancel();
}

bool Connection::WaitIdle(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_cv_.wait_for(lock, timeout, [this] { return in_flight_.empty(); });
}

void Connection::Close() {
  std::map<std::string, std::shared_ptr<PendingRequest>> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    for (auto& [key, request] : in_flight_) request.token.Cancel();
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

}  // namespace imgmcp::mcp
