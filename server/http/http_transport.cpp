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
constexpr int kSessionNotFound = -32001;
constexpr int kBadRequest = -32000;
// How often a streaming connection wakes without data (to notice shutdown promptly).
constexpr auto kStreamPoll = std::chrono::milliseconds(500);
// A tools/call answered within this long, with nothing sent before its result, is answered as
// one JSON body (cheaper for both sides); a slower one gets an SSE stream, priming event first.
constexpr auto kToolCallJsonWait = std::chrono::milliseconds(20);

std::string ErrorBody(int code, const std::string& message, const Json& id = nullptr) {
  Json error = {{"code", code}, {"message", message}};
  return Json{{"jsonrpc", "2.0"}, {"error", std::move(error)}, {"id", id}}.dump();
}

void ReplyError(httplib::Response& res, int status, int code, const std::string& message,
                const Json& id = nullptr) {
  res.status = status;
  res.set_content(ErrorBody(code, message, id), "application/json");
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

// What one POST body holds.
struct BodyShape {
  bool batch = false;
  bool initialize = false;      // a single initialize request
  bool tools_call = false;      // some request is tools/call (may run long: see kToolCallJsonWait)
  bool invalid_single = false;  // a single message that is no request, notification or response
  std::vector<Json> request_ids;
};

BodyShape Classify(const Json& body) {
  BodyShape shape;
  shape.batch = body.is_array();
  auto visit = [&shape](const Json& m) {
    if (!m.is_object()) return false;
    auto method = m.find("method");
    if (method == m.end()) return m.contains("id") && (m.contains("result") || m.contains("error"));
    if (!method->is_string()) return false;
    auto id = m.find("id");
    if (id == m.end()) return true;  // a notification
    if (!mcp::IsValidId(*id)) return false;
    shape.request_ids.push_back(*id);
    if (*method == "tools/call") shape.tools_call = true;
    if (*method == "initialize") shape.initialize = true;
    return true;
  };
  if (!shape.batch) {
    shape.invalid_single = !visit(body);
    return shape;
  }
  for (const Json& element : body) visit(element);
  shape.initialize = false;  // never inside a batch: the core refuses it there
  return shape;
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
  http_->Shutdown();
  if (listen_thread_.joinable()) listen_thread_.join();
  if (sweep_thread_.joinable()) sweep_thread_.join();
  // Sessions created by requests that raced with the shutdown.
  for (const auto& session : sessions_.TakeAll()) session->End();
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
      ReplyError(res, 403, kBadRequest, "Forbidden: Host or Origin not allowed");
      return httplib::Server::HandlerResponse::Handled;
    }
    // The gallery page holds no data: what it shows comes through /mcp, with the token.
    if (gallery) return httplib::Server::HandlerResponse::Unhandled;
    if (!options_.auth_token.empty() &&
        !BearerTokenMatches(req.get_header_value("Authorization"), options_.auth_token)) {
      res.set_header("WWW-Authenticate", "Bearer realm=\"imgmcp\"");
      ReplyError(res, 401, kBadRequest, "Unauthorized: a valid bearer token is required");
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
        ReplyError(res, 500, mcp::rpc_error::kInternalError, "Internal error");
      });

  http.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok", "text/plain");
  });
  InstallGalleryRoute(http, options_.gallery_page);

  // Streams `channel` as this response's text/event-stream body.
  auto stream = [this](httplib::Response& res, const std::shared_ptr<HttpSession>& session,
                       std::shared_ptr<SseChannel> channel) {
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_header(kSessionHeader, session->id());
    const int keepalive_polls = std::max<int>(
        1, static_cast<int>(std::chrono::milliseconds(options_.sse_keepalive) / kStreamPoll));
    auto idle_polls = std::make_shared<int>(0);  // touched only by this connection's thread
    std::weak_ptr<HttpSession> weak = session;
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
        [channel, weak](bool) {
          channel->Abort();
          if (auto s = weak.lock()) s->Detach(channel);
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

  http.Post(kEndpoint, [this, stream, find_session, version_ok](
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
    if (parsed.error) return ReplyError(res, 400, parsed.error->code, parsed.error->message);
    Json body = std::move(parsed.message);
    const BodyShape shape = Classify(body);

    std::shared_ptr<HttpSession> session;
    bool new_session = false;
    if (!req.has_header(kSessionHeader) && shape.initialize) {
      session = std::make_shared<HttpSession>(
          RandomHex(16), SessionOptions{options_.sse_retry, options_.replay_max_events,
                                        options_.replay_max_bytes});
      session->Attach(server_.Connect(*session));
      new_session = true;
    } else {
      session = find_session(req, res);
      if (!session) return;
      if (!version_ok(req, res)) return;
    }

    if (shape.invalid_single) {
      return ReplyError(res, 400, mcp::rpc_error::kInvalidRequest,
                        "Invalid Request: not a JSON-RPC request, notification or response");
    }
    if (shape.batch) {
      const std::string version = session->connection().protocol_version();
      if (body.empty() || !mcp::BatchesAllowed(version)) {
        return ReplyError(res, 400, mcp::rpc_error::kInvalidRequest,
                          body.empty() ? "Invalid Request: empty batch"
                                       : "Invalid Request: batches are not supported in protocol "
                                         "version " +
                                             version);
      }
    }
    if (shape.request_ids.empty()) {  // notifications and responses only
      session->connection().HandleJson(std::move(body));
      res.status = 202;
      return;
    }
    auto exchange = session->BeginExchange(shape.request_ids, shape.batch);
    if (!exchange) {
      return ReplyError(res, 409, mcp::rpc_error::kInvalidRequest,
                        "Invalid Request: a request with this id is still in progress",
                        shape.batch ? Json(nullptr) : shape.request_ids.front());
    }
    session->connection().HandleJson(std::move(body));
    HttpSession::Answer answer = session->AwaitAnswer(
        exchange, shape.tools_call ? std::optional(kToolCallJsonWait) : std::nullopt);
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
    stream(res, session, std::move(answer.sse));
  });

  http.Get(kEndpoint,
           [stream, find_session, version_ok](const httplib::Request& req, httplib::Response& res) {
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
             stream(res, session, std::move(channel));
           });

  http.Delete(kEndpoint, [this, version_ok](const httplib::Request& req, httplib::Response& res) {
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
