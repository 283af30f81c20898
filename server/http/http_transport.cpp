#include "server/http/http_transport.h"

#include <httplib.h>
#include <sys/socket.h>

#include <exception>
#include <utility>

#include "common/log.h"
#include "common/random.h"
#include "server/http/gallery_route.h"
#include "server/http/gated_server.h"
#include "server/http/http_session.h"
#include "server/http/sse.h"
#include "server/mcp/connection.h"
#include "server/mcp/json_rpc.h"
#include "server/mcp/protocol_version.h"
#include "server/mcp/server.h"

// ThreadSanitizer suppressions (TSAN builds only) for the uninstrumented system cpp-httplib:
// TSAN cannot see the acquire fast path of its function-local statics (e.g. the chunked-encoding
// terminator), so the first connection thread to initialise one "writes" it and every other one
// that later sends it is reported as a race. The report is confined to bytes httplib itself hands
// to send(); what this file passes to DataSink::write is a local buffer per call.
#if defined(__SANITIZE_THREAD__)
extern "C" const char* __tsan_default_suppressions() {
  return "race:httplib::detail::send_socket\n";
}
#endif

namespace imgmcp::http {

namespace {

constexpr char kLog[] = "http";
constexpr char kEndpoint[] = "/mcp";
constexpr char kSessionHeader[] = "Mcp-Session-Id";
constexpr char kVersionHeader[] = "MCP-Protocol-Version";
constexpr char kMethodHeader[] = "Mcp-Method";
constexpr char kNameHeader[] = "Mcp-Name";
constexpr int kSessionNotFound = -32001;
constexpr int kBadRequest = -32000;
// How often a streaming connection wakes without data (to notice shutdown promptly).
constexpr auto kStreamPoll = std::chrono::milliseconds(500);
// A request of a method that may stream (tools/call) answered within this long, with nothing sent
// before its result, is answered as one JSON body (cheaper for both sides); a slower one gets an
// SSE stream (a legacy session's with its priming event first).
constexpr auto kStreamingJsonWait = std::chrono::milliseconds(20);

// A transport-level error of the legacy binding (SDK conventions: -32000 "Bad Request…",
// -32001 "Session not found").
mcp::RpcError TransportError(int code, std::string message) {
  return mcp::RpcError{code, std::move(message), std::nullopt, true};
}

// Answers with a JSON-RPC error body. In the modern era an id that could not be read is left out
// (its schema has no null ids).
void Refuse(httplib::Response& res, int status, const mcp::RpcError& error,
            const Json& id = nullptr, bool modern = false) {
  res.status = status;
  res.set_content(mcp::ErrorResponseText(id, error, modern), "application/json");
}

void ReplyError(httplib::Response& res, int status, int code, const std::string& message,
                const Json& id = nullptr) {
  Refuse(res, status, TransportError(code, message), id);
}

// The body of a refusal the connection gate sends itself.
std::string ErrorBody(int code, const std::string& message) {
  return mcp::ErrorResponseText(nullptr, TransportError(code, message));
}

std::optional<std::string> HeaderOf(const httplib::Request& req, const char* name) {
  if (!req.has_header(name)) return std::nullopt;
  std::string value = req.get_header_value(name);
  const size_t first = value.find_first_not_of(" \t");
  if (first == std::string::npos) return std::string();
  return value.substr(first, value.find_last_not_of(" \t") - first + 1);
}

McpHeaders McpHeadersOf(const httplib::Request& req) {
  return McpHeaders{HeaderOf(req, kVersionHeader), HeaderOf(req, kMethodHeader),
                    HeaderOf(req, kNameHeader)};
}

// The request names a modern protocol version in its MCP-Protocol-Version header.
bool ModernHeader(const httplib::Request& req) {
  auto version = HeaderOf(req, kVersionHeader);
  return version && mcp::IsModernVersionName(*version);
}

// A GET or DELETE from a modern client: no session header, a modern version header.
bool IsModernSessionless(const httplib::Request& req) {
  return !req.has_header(kSessionHeader) && ModernHeader(req);
}

std::vector<std::string> AllowedHosts(const HttpOptions& options) {
  std::vector<std::string> hosts = options.extra_allowed_hosts;
  if (!options.host.empty() && options.host != "0.0.0.0" && options.host != "::" &&
      options.host != "[::]") {
    hosts.push_back(options.host.find(':') != std::string::npos && options.host.front() != '['
                        ? "[" + options.host + "]"
                        : options.host);
  }
  return hosts;
}

}  // namespace

// httplib::Server behind the connection gate (server/http/gated_server.h).
class HttpTransport::Server final : public GatedServer {};

HttpTransport::HttpTransport(mcp::McpServer& server, HttpOptions options)
    : server_(server),
      options_(std::move(options)),
      policy_(AllowedHosts(options_)),
      sessions_(options_.clock ? *options_.clock : system_clock_, options_.session_idle_timeout,
                options_.max_sessions),
      http_(std::make_unique<Server>()) {}

HttpTransport::~HttpTransport() { Stop(); }

Result<int> HttpTransport::Start() {
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    if (started_) return MakeError(ErrorCode::kFailedPrecondition, "already started");
    started_ = true;
  }
  http_->set_payload_max_length(options_.max_body_bytes);
  // SSE answers leave in several small writes; without TCP_NODELAY, Nagle holds each small call
  // for a delayed ACK (~40 ms per call on loopback).
  http_->set_tcp_nodelay(true);
  http_->set_keep_alive_max_count(1000);
  // Short, so Stop() is prompt: an idle keep-alive connection holds its thread this long.
  http_->set_keep_alive_timeout(2);
  http_->set_read_timeout(30, 0);
  http_->set_write_timeout(30, 0);
  InstallRoutes();

  std::string bind_host = options_.host;
  if (bind_host.size() > 2 && bind_host.front() == '[' && bind_host.back() == ']') {
    bind_host = bind_host.substr(1, bind_host.size() - 2);
  }
  auto port = http_->Bind(bind_host, options_.port);
  if (!port.ok()) {
    std::lock_guard<std::mutex> lock(state_mu_);
    listener_done_ = true;
    state_cv_.notify_all();
    return MakeError(ErrorCode::kUnavailable, "cannot listen on " + options_.host + ":" +
                                                  std::to_string(options_.port) + ": " +
                                                  port.error().message);
  }
  GateOptions gate;
  gate.header_timeout = options_.header_timeout;
  gate.max_pending = options_.max_pending_connections;
  gate.refusal_body = [this](int status) {
    switch (status) {
      case 408:
        return ErrorBody(kBadRequest, "Request Timeout: the request head did not arrive within " +
                                          std::to_string(options_.header_timeout.count()) + " ms");
      case 413:
        return ErrorBody(kBadRequest, "Payload Too Large: the limit is " +
                                          std::to_string(options_.max_body_bytes) + " bytes");
      default:
        return ErrorBody(kBadRequest, "Request Header Fields Too Large");
    }
  };
  listen_thread_ = std::thread([this, gate = std::move(gate)] {
    bool ok = false;
    try {
      ok = http_->Serve(gate, options_.max_connections);
    } catch (const std::exception& e) {
      log::Error(kLog, std::string("listener failed: ") + e.what());
    }
    std::lock_guard<std::mutex> lock(state_mu_);
    if (!ok && !stopping_) log::Error(kLog, "the HTTP listener stopped unexpectedly");
    listener_done_ = true;
    state_cv_.notify_all();
  });
  // httplib's stop() does nothing until the listener thread has marked itself running, so a
  // Stop() in that window would leave the listener up and Stop() joining it forever. Return only
  // once it runs (or has already ended).
  {
    std::unique_lock<std::mutex> lock(state_mu_);
    while (!listener_done_ && !http_->serving()) {
      state_cv_.wait_for(lock, std::chrono::milliseconds(1));
    }
  }
  sweep_thread_ = std::thread([this] { SweepLoop(); });
  return *port;
}

void HttpTransport::Stop() {
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  state_cv_.notify_all();
  for (const auto& session : sessions_.TakeAll()) session->End();
  EndModernRequests();
  http_->Shutdown();
  if (listen_thread_.joinable()) listen_thread_.join();
  if (sweep_thread_.joinable()) sweep_thread_.join();
  // Sessions created by requests that raced with the shutdown.
  for (const auto& session : sessions_.TakeAll()) session->End();
  EndModernRequests();
}

bool HttpTransport::RememberModernRequest(const std::shared_ptr<HttpSession>& session) {
  std::lock_guard<std::mutex> lock(state_mu_);
  if (stopping_) return false;
  modern_requests_.emplace(session.get(), session);
  return true;
}

void HttpTransport::ForgetModernRequest(const std::shared_ptr<HttpSession>& session) {
  std::lock_guard<std::mutex> lock(state_mu_);
  modern_requests_.erase(session.get());
}

void HttpTransport::EndModernRequests() {
  std::vector<std::shared_ptr<HttpSession>> live;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    for (const auto& [key, weak] : modern_requests_) {
      if (auto session = weak.lock()) live.push_back(std::move(session));
    }
    modern_requests_.clear();
  }
  for (const auto& session : live) {
    session->connection().EndSubscriptions();  // a listen stream gets its closing result
    session->End();
  }
}

void HttpTransport::Wait() {
  std::unique_lock<std::mutex> lock(state_mu_);
  state_cv_.wait(lock, [this] { return stopping_ || listener_done_; });
}

void HttpTransport::SweepLoop() {
  const auto period = std::clamp<std::chrono::steady_clock::duration>(
      options_.session_idle_timeout / 4, std::chrono::seconds(1), std::chrono::seconds(30));
  std::unique_lock<std::mutex> lock(state_mu_);
  while (!stopping_) {
    state_cv_.wait_for(lock, period, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    for (const auto& session : sessions_.TakeExpired()) {
      log::Info(kLog, "session " + session->id().substr(0, 8) + "… expired after idling");
      session->End();
    }
    lock.lock();
  }
}

void HttpTransport::InstallRoutes() {
  Server& http = *http_;

  // Host/Origin allow-list and bearer token, before any body is read.
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    const bool gallery = req.path == kGalleryPath;
    if (req.path != kEndpoint && !gallery) return httplib::Server::HandlerResponse::Unhandled;
    if (!policy_.HostAllowed(req.get_header_value("Host")) ||
        !policy_.OriginAllowed(req.get_header_value("Origin"))) {
      log::Warn(kLog, "refused a request with Host '" + req.get_header_value("Host") +
                          "', Origin '" + req.get_header_value("Origin") + "'");
      Refuse(res, 403, TransportError(kBadRequest, "Forbidden: Host or Origin not allowed"),
             nullptr, ModernHeader(req));
      return httplib::Server::HandlerResponse::Handled;
    }
    // The gallery page holds no data: what it shows comes through /mcp, with the token.
    if (gallery) return httplib::Server::HandlerResponse::Unhandled;
    if (!options_.auth_token.empty() &&
        !BearerTokenMatches(req.get_header_value("Authorization"), options_.auth_token)) {
      res.set_header("WWW-Authenticate", "Bearer realm=\"imgmcp\"");
      Refuse(res, 401,
             TransportError(kBadRequest, "Unauthorized: a valid bearer token is required"), nullptr,
             ModernHeader(req));
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  http.set_error_handler(
      httplib::Server::HandlerWithResponse([this](const httplib::Request&, httplib::Response& res) {
        if (res.status != 413 || !res.body.empty())
          return httplib::Server::HandlerResponse::Unhandled;
        ReplyError(res, 413, kBadRequest,
                   "Payload Too Large: the limit is " + std::to_string(options_.max_body_bytes) +
                       " bytes");
        return httplib::Server::HandlerResponse::Handled;
      }));

  http.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown exception";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        log::Error(kLog, "request handler failed: " + what);
        Refuse(res, 500, mcp::InternalError("Internal error"));
      });

  http.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok", "text/plain");
  });
  InstallGalleryRoute(http, options_.gallery_page);

  // Streams `channel` as this response's text/event-stream body. A legacy session outlives its
  // streams; a modern request's session is the request itself and ends with its stream — a
  // client closing the stream cancels the request (2026-07-28 basic/patterns/cancellation).
  auto stream = [this](httplib::Response& res, const std::shared_ptr<HttpSession>& session,
                       std::shared_ptr<SseChannel> channel, bool modern) {
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    if (!modern) res.set_header(kSessionHeader, session->id());
    const int keepalive_polls = std::max<int>(
        1, static_cast<int>(std::chrono::milliseconds(options_.sse_keepalive) / kStreamPoll));
    auto idle_polls = std::make_shared<int>(0);  // touched only by this connection's thread
    std::weak_ptr<HttpSession> weak = session;
    std::shared_ptr<HttpSession> owned = modern ? session : nullptr;
    res.set_chunked_content_provider(
        "text/event-stream",
        [channel, idle_polls, keepalive_polls](size_t, httplib::DataSink& sink) {
          std::string data;
          switch (channel->Pull(&data, kStreamPoll)) {
            case SseChannel::PullResult::kData:
              *idle_polls = 0;
              return sink.write(data.data(), data.size());
            case SseChannel::PullResult::kTimeout: {
              if (++*idle_polls < keepalive_polls) return true;
              *idle_polls = 0;
              const std::string ping = CommentFrame("keep-alive");
              return sink.write(ping.data(), ping.size());
            }
            case SseChannel::PullResult::kEnd:
              sink.done();
              return true;
            case SseChannel::PullResult::kAborted:
              return false;
          }
          return false;
        },
        [this, channel, weak, owned](bool) {
          channel->Abort();
          if (owned) {
            owned->End();
            ForgetModernRequest(owned);
          } else if (auto s = weak.lock()) {
            s->Detach(channel);
          }
        });
  };

  // Resolves the session of a non-initialize request, answering 400/404 itself when it cannot.
  auto find_session = [this](const httplib::Request& req,
                             httplib::Response& res) -> std::shared_ptr<HttpSession> {
    const std::string id = req.get_header_value(kSessionHeader);
    if (id.empty()) {
      ReplyError(res, 400, kBadRequest, "Bad Request: Mcp-Session-Id header is required");
      return nullptr;
    }
    auto session = sessions_.Find(id);
    if (!session) {
      ReplyError(res, 404, kSessionNotFound, "Session not found");
      return nullptr;
    }
    return session;
  };
  auto version_ok = [](const httplib::Request& req, httplib::Response& res) {
    if (!req.has_header(kVersionHeader)) return true;  // assume 2025-03-26
    const std::string version = req.get_header_value(kVersionHeader);
    if (mcp::IsSupportedProtocolVersion(version)) return true;
    std::string supported;
    for (std::string_view v : mcp::kSupportedProtocolVersions) {
      supported += (supported.empty() ? "" : ", ") + std::string(v);
    }
    ReplyError(
        res, 400, kBadRequest,
        "Bad Request: Unsupported protocol version " + version + " (supported: " + supported + ")");
    return false;
  };

  // A modern (2026-07-28) request: no session; it is served by a connection of its own, which
  // lives as long as its answer (any replica can serve it).
  auto serve_modern = [this, stream](const httplib::Request& req, httplib::Response& res, Json body,
                                     const mcp::RequestFacts& facts) {
    if (auto refusal = CheckModernHeaders(facts, McpHeadersOf(req))) {
      return Refuse(res, 400, *refusal, facts.id, /*modern=*/true);
    }
    if (facts.kind != mcp::IncomingMessage::Kind::kRequest) {
      // The only client notification is notifications/cancelled, which on this transport means
      // nothing: closing a request's stream is what cancels it. Accepted and dropped.
      res.status = 202;
      return;
    }
    auto session = std::make_shared<HttpSession>(
        "", SessionOptions{/*resumable=*/false, options_.sse_retry, 0, 0});
    session->Attach(server_.Connect(*session, mcp::ConnectionMode::kModernOnly));
    auto exchange = session->BeginExchange({facts.id}, /*batch=*/false);
    if (!RememberModernRequest(session)) {
      session->End();
      return Refuse(res, 503, mcp::InternalError("Service Unavailable: the server is stopping"),
                    facts.id, /*modern=*/true);
    }
    session->connection().HandleJson(std::move(body));
    const bool streams = facts.info != nullptr && facts.info->streams;
    HttpSession::Answer answer =
        session->AwaitAnswer(exchange, streams ? std::optional(kStreamingJsonWait) : std::nullopt);
    if (answer.session_closed) {
      ForgetModernRequest(session);
      return Refuse(res, 503, mcp::InternalError("Service Unavailable: the server is stopping"),
                    facts.id, /*modern=*/true);
    }
    if (answer.json) {
      session->End();
      ForgetModernRequest(session);
      res.status = answer.error_code
                       ? ModernErrorStatus(*answer.error_code, answer.rejected_before_dispatch)
                       : 200;
      res.set_content(std::move(*answer.json), "application/json");
      return;
    }
    stream(res, session, std::move(answer.sse), /*modern=*/true);
  };

  http.Post(kEndpoint, [this, stream, find_session, version_ok, serve_modern](
                           const httplib::Request& req, httplib::Response& res,
                           const httplib::ContentReader& content_reader) {
    // The body is read here, never past the limit (chunked and length-less bodies included);
    // a body left unread ends the connection.
    std::string request_body;
    switch (ReadCappedBody(req, content_reader, options_.max_body_bytes, &request_body)) {
      case BodyRead::kOk:
        break;
      case BodyRead::kTooLarge:
        res.set_header("Connection", "close");
        return ReplyError(res, 413, kBadRequest,
                          "Payload Too Large: the limit is " +
                              std::to_string(options_.max_body_bytes) + " bytes");
      case BodyRead::kUnreadable:
        res.set_header("Connection", "close");
        return ReplyError(res, 400, kBadRequest,
                          "Bad Request: the body could not be read (malformed chunked framing, "
                          "or the client stopped sending)");
    }
    const std::string accept = req.get_header_value("Accept");
    if (!AcceptsMediaType(accept, "application/json") ||
        !AcceptsMediaType(accept, "text/event-stream")) {
      return ReplyError(res, 406, kBadRequest,
                        "Not Acceptable: Client must accept both application/json and "
                        "text/event-stream");
    }
    if (!IsJsonContentType(req.get_header_value("Content-Type"))) {
      return ReplyError(res, 415, kBadRequest,
                        "Unsupported Media Type: Content-Type must be application/json");
    }
    mcp::ParsedMessage parsed = mcp::ParseMessageText(request_body);
    if (parsed.error) return Refuse(res, 400, *parsed.error);
    Json body = std::move(parsed.message);
    const bool batch = mcp::IsBatch(body);

    // One message: which era serves it (a batch is always legacy).
    std::vector<mcp::RequestFacts> facts;
    if (batch) {
      for (const Json& element : body) facts.push_back(mcp::ReadRequestFacts(element));
    } else {
      facts.push_back(mcp::ReadRequestFacts(body));
      const EraChoice era = ChooseEra(facts.front(), McpHeadersOf(req));
      if (era.refusal) return Refuse(res, 400, *era.refusal, facts.front().id, /*modern=*/true);
      if (era.era == mcp::Era::kModern) return serve_modern(req, res, std::move(body), facts[0]);
    }

    // Legacy: the session's connection.
    using Kind = mcp::IncomingMessage::Kind;
    std::vector<Json> request_ids;
    for (const mcp::RequestFacts& f : facts) {
      if (f.kind == Kind::kRequest) request_ids.push_back(f.id);
    }
    const bool initialize =
        !batch && facts[0].kind == Kind::kRequest && facts[0].method == mcp::methods::kInitialize;
    std::shared_ptr<HttpSession> session;
    bool new_session = false;
    if (!req.has_header(kSessionHeader) && initialize) {
      session = std::make_shared<HttpSession>(
          RandomHex(16), SessionOptions{/*resumable=*/true, options_.sse_retry,
                                        options_.replay_max_events, options_.replay_max_bytes});
      session->Attach(server_.Connect(*session));
      new_session = true;
    } else {
      session = find_session(req, res);
      if (!session) return;
      if (!version_ok(req, res)) return;
    }

    // A message the core would only refuse: refused here, with the status that says so.
    if (!batch && facts[0].kind == Kind::kInvalid) {
      mcp::IncomingMessage shape = mcp::ReadIncoming(body);
      if (shape.error) return Refuse(res, 400, *shape.error, shape.id);
    }
    if (batch) {
      if (auto refusal = session->connection().CheckBatch(body)) {
        return Refuse(res, 400, *refusal);
      }
    }
    if (request_ids.empty()) {  // notifications and responses only
      session->connection().HandleJson(std::move(body));
      res.status = 202;
      return;
    }
    auto exchange = session->BeginExchange(request_ids, batch);
    if (!exchange) {
      return ReplyError(res, 409, mcp::rpc_error::kInvalidRequest,
                        "Invalid Request: a request with this id is still in progress",
                        batch ? Json(nullptr) : request_ids.front());
    }
    bool streams = false;
    for (const mcp::RequestFacts& f : facts) streams |= f.info != nullptr && f.info->streams;
    session->connection().HandleJson(std::move(body));
    HttpSession::Answer answer =
        session->AwaitAnswer(exchange, streams ? std::optional(kStreamingJsonWait) : std::nullopt);
    if (answer.session_closed) {
      return ReplyError(res, 404, kSessionNotFound, "Session not found");
    }
    if (new_session) {
      if (!session->connection().initialized()) {
        session->End();  // a refused initialize leaves no session behind
      } else if (auto insertion = sessions_.Insert(session->id(), session); !insertion.inserted) {
        session->End();
        return ReplyError(res, 503, kBadRequest,
                          "Service Unavailable: too many sessions, all of them busy");
      } else {
        if (insertion.evicted) {
          log::Info(kLog, "session " + insertion.evicted->id().substr(0, 8) +
                              "… ended to make room (the longest idle of " +
                              std::to_string(options_.max_sessions) + ")");
          insertion.evicted->End();
        }
        log::Info(kLog, "session " + session->id().substr(0, 8) + "… started (" +
                            std::to_string(sessions_.size()) + " open)");
      }
    }
    if (answer.json) {
      res.status = 200;
      if (session->connection().initialized()) res.set_header(kSessionHeader, session->id());
      res.set_content(std::move(*answer.json), "application/json");
      return;
    }
    stream(res, session, std::move(answer.sse), /*modern=*/false);
  });

  // GET and DELETE belong to legacy sessions; protocol revision 2026-07-28 has neither a GET
  // stream nor sessions to end (transports/streamable-http "Backward Compatibility").
  auto modern_not_allowed = [](httplib::Response& res) {
    res.set_header("Allow", "POST");
    Refuse(res, 405,
           TransportError(kBadRequest,
                          "Method Not Allowed: protocol revision 2026-07-28 has no "
                          "GET stream and no sessions; use POST"),
           nullptr, /*modern=*/true);
  };

  http.Get(kEndpoint, [stream, find_session, version_ok, modern_not_allowed](
                          const httplib::Request& req, httplib::Response& res) {
    if (IsModernSessionless(req)) return modern_not_allowed(res);
    if (!AcceptsMediaType(req.get_header_value("Accept"), "text/event-stream")) {
      return ReplyError(res, 406, kBadRequest,
                        "Not Acceptable: Client must accept text/event-stream");
    }
    auto session = find_session(req, res);
    if (!session || !version_ok(req, res)) return;
    std::shared_ptr<SseChannel> channel;
    auto last = ParseEventId(req.get_header_value("Last-Event-ID"));
    channel = last ? session->Resume(*last) : session->OpenStandaloneStream();
    if (!channel) return ReplyError(res, 404, kSessionNotFound, "Session not found");
    stream(res, session, std::move(channel), /*modern=*/false);
  });

  http.Delete(kEndpoint, [this, version_ok, modern_not_allowed](const httplib::Request& req,
                                                                httplib::Response& res) {
    if (IsModernSessionless(req)) return modern_not_allowed(res);
    const std::string id = req.get_header_value(kSessionHeader);
    if (id.empty()) {
      return ReplyError(res, 400, kBadRequest, "Bad Request: Mcp-Session-Id header is required");
    }
    if (!version_ok(req, res)) return;
    auto session = sessions_.Remove(id);
    if (!session) return ReplyError(res, 404, kSessionNotFound, "Session not found");
    session->End();
    log::Info(kLog, "session " + id.substr(0, 8) + "… ended by the client");
    res.status = 200;
  });

  auto not_allowed = [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Allow", "GET, POST, DELETE");
    ReplyError(res, 405, kBadRequest, "Method Not Allowed");
  };
  http.Put(kEndpoint, not_allowed);
  http.Patch(kEndpoint, not_allowed);
  http.Options(kEndpoint, not_allowed);
}

}  // namespace imgmcp::http
