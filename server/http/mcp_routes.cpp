#include "server/http/mcp_routes.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "common/log.h"
#include "common/random.h"
#include "server/http/gallery_route.h"
#include "server/http/gated_server.h"
#include "server/mcp/connection.h"
#include "server/mcp/json_rpc.h"
#include "server/mcp/method_table.h"
#include "server/mcp/protocol_version.h"
#include "server/mcp/server.h"

namespace imgmcp::http {

namespace {

using httplib::Request;
using httplib::Response;
using Handled = httplib::Server::HandlerResponse;
using Kind = mcp::IncomingMessage::Kind;

constexpr char kLog[] = "http";
constexpr char kEndpoint[] = "/mcp";
constexpr char kSessionHeader[] = "Mcp-Session-Id";
constexpr char kVersionHeader[] = "MCP-Protocol-Version";
constexpr char kMethodHeader[] = "Mcp-Method";
constexpr char kNameHeader[] = "Mcp-Name";
constexpr char kJson[] = "application/json";
constexpr char kEventStream[] = "text/event-stream";
constexpr int kSessionNotFound = -32001;
constexpr int kBadRequest = -32000;
constexpr char kSessionRequired[] = "Bad Request: Mcp-Session-Id header is required";
// A request of a method that may stream (tools/call) answered within this long, with nothing sent
// before its result, is answered as one JSON body (cheaper for both sides); a slower one gets an
// SSE stream (a legacy session's with its priming event first).
constexpr auto kStreamingJsonWait = std::chrono::milliseconds(20);
// The shortest keep-alive interval of an idle SSE stream (a zero setting would spin).
constexpr auto kMinKeepAlive = std::chrono::milliseconds(100);

// A transport-level error of the legacy binding (SDK conventions: -32000 "Bad Request…",
// -32001 "Session not found").
mcp::RpcError TransportError(int code, std::string message) {
  return mcp::RpcError{code, std::move(message), std::nullopt, true};
}

// A JSON answer's body, moved in: httplib's set_content copies its argument.
void SetJsonBody(Response& res, std::string body) {
  res.body = std::move(body);
  res.headers.erase("Content-Type");
  res.set_header("Content-Type", kJson);
}

// Answers with a JSON-RPC error body. In the modern era an id that could not be read is left out
// (its schema has no null ids).
void Refuse(Response& res, int status, const mcp::RpcError& error, const Json& id = nullptr,
            bool modern = false) {
  res.status = status;
  SetJsonBody(res, mcp::ErrorResponseText(id, error, modern));
}

void ReplyError(Response& res, int status, int code, std::string message) {
  Refuse(res, status, TransportError(code, std::move(message)));
}

void SessionNotFound(Response& res) { ReplyError(res, 404, kSessionNotFound, "Session not found"); }

mcp::RpcError Stopping() {
  return mcp::InternalError("Service Unavailable: the server is stopping");
}

// The value of a request header, or nullptr: one look-up in httplib's case-insensitive map.
const std::string* FindHeader(const Request& req, const char* name) {
  auto it = req.headers.find(name);
  return it == req.headers.end() ? nullptr : &it->second;
}

std::optional<std::string> HeaderOf(const Request& req, const char* name) {
  const std::string* value = FindHeader(req, name);
  if (value == nullptr) return std::nullopt;
  const size_t first = value->find_first_not_of(" \t");
  if (first == std::string::npos) return std::string();
  return value->substr(first, value->find_last_not_of(" \t") - first + 1);
}

McpHeaders McpHeadersOf(const Request& req) {
  return McpHeaders{HeaderOf(req, kVersionHeader), HeaderOf(req, kMethodHeader),
                    HeaderOf(req, kNameHeader)};
}

// The request names a modern protocol version in its MCP-Protocol-Version header.
bool ModernHeader(const Request& req) {
  auto version = HeaderOf(req, kVersionHeader);
  return version && mcp::IsModernVersionName(*version);
}

// A GET or DELETE from a modern client: no session header, a modern version header.
bool IsModernSessionless(const Request& req) {
  return FindHeader(req, kSessionHeader) == nullptr && ModernHeader(req);
}

// GET and DELETE belong to legacy sessions; protocol revision 2026-07-28 has neither a GET
// stream nor sessions to end (transports/streamable-http "Backward Compatibility").
void RefuseModernGetOrDelete(Response& res) {
  res.set_header("Allow", "POST");
  Refuse(res, 405,
         TransportError(kBadRequest,
                        "Method Not Allowed: protocol revision 2026-07-28 has no GET stream and "
                        "no sessions; use POST"),
         nullptr, /*modern=*/true);
}

void NotAllowed(const Request&, Response& res) {
  res.set_header("Allow", "GET, POST, DELETE");
  ReplyError(res, 405, kBadRequest, "Method Not Allowed");
}

// A legacy session's MCP-Protocol-Version header names a version initialize negotiates; a missing
// one means 2025-03-26. Answers 400 itself when it does not.
bool VersionOk(const Request& req, Response& res) {
  const std::string* version = FindHeader(req, kVersionHeader);
  if (version == nullptr || mcp::IsSupportedProtocolVersion(*version)) return true;
  ReplyError(res, 400, kBadRequest,
             "Bad Request: " + mcp::UnsupportedVersionText(*version, mcp::Era::kLegacy));
  return false;
}

// A POST must accept both answer forms and send JSON. Answers 406 or 415 itself when not.
bool MediaTypesOk(const Request& req, Response& res) {
  const std::string accept = req.get_header_value("Accept");
  if (!AcceptsMediaType(accept, kJson) || !AcceptsMediaType(accept, kEventStream)) {
    ReplyError(res, 406, kBadRequest,
               "Not Acceptable: Client must accept both application/json and text/event-stream");
    return false;
  }
  if (!IsJsonContentType(req.get_header_value("Content-Type"))) {
    ReplyError(res, 415, kBadRequest,
               "Unsupported Media Type: Content-Type must be application/json");
    return false;
  }
  return true;
}

void AnswerException(const Request&, Response& res, std::exception_ptr ep) {
  std::string what = "unknown exception";
  try {
    if (ep) std::rethrow_exception(ep);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  log::Error(kLog, "request handler failed: " + what);
  Refuse(res, 500, mcp::InternalError("Internal error"));
}

// Writes what `channel` queued to an SSE response — or, when nothing came for `keepalive`, a
// comment that keeps the connection alive and finds dead peers. False drops the connection.
bool PumpStream(SseChannel& channel, std::chrono::milliseconds keepalive, httplib::DataSink& sink) {
  std::string data;
  switch (channel.Pull(&data, keepalive)) {
    case SseChannel::PullResult::kData:
      return sink.write(data.data(), data.size());
    case SseChannel::PullResult::kTimeout: {
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

// One parsed POST body: a message or a batch, with the routing facts of each message.
struct PostedMessage {
  Json body;
  bool batch = false;
  std::vector<mcp::RequestFacts> facts;  // one per message

  explicit PostedMessage(Json parsed) : body(std::move(parsed)), batch(mcp::IsBatch(body)) {
    if (!batch) {
      facts.push_back(mcp::ReadRequestFacts(body));
      return;
    }
    for (const Json& element : body) facts.push_back(mcp::ReadRequestFacts(element));
  }

  bool IsInitialize() const {
    return !batch && facts[0].kind == Kind::kRequest &&
           facts[0].method == mcp::methods::kInitialize;
  }
  std::vector<Json> RequestIds() const {
    std::vector<Json> ids;
    for (const mcp::RequestFacts& f : facts) {
      if (f.kind == Kind::kRequest) ids.push_back(f.id);
    }
    return ids;
  }
  // How long to wait for an answer before streaming: a while when a method may stream, else
  // until the answer comes.
  std::optional<std::chrono::milliseconds> StreamAfter() const {
    const bool streams = std::any_of(facts.begin(), facts.end(), [](const mcp::RequestFacts& f) {
      return f.info != nullptr && f.info->streams;
    });
    return streams ? std::optional(kStreamingJsonWait) : std::nullopt;
  }
  // The refusal of a message the core would only refuse (its shape, or a batch the session does
  // not allow), answered here with the status that says so (400).
  bool RefuseMalformed(Response& res, HttpSession& session) const {
    if (!batch && facts[0].kind == Kind::kInvalid) {
      const Json* params = nullptr;
      mcp::IncomingMessage shape = mcp::PeekIncoming(body, &params);
      if (shape.error) Refuse(res, 400, *shape.error, shape.id);
      return shape.error.has_value();
    }
    if (!batch) return false;
    auto refusal = session.connection().CheckBatch(body);
    if (refusal) Refuse(res, 400, *refusal);
    return refusal.has_value();
  }
};

// --- LiveAnswers
// ----------------------------------------------------------------------------------

bool LiveAnswers::AddRequest(const std::shared_ptr<HttpSession>& request) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return false;
  requests_.emplace(request.get(), request);
  return true;
}

void LiveAnswers::RemoveRequest(const HttpSession* request) {
  std::lock_guard<std::mutex> lock(mu_);
  requests_.erase(request);
}

bool LiveAnswers::AddStream(const std::shared_ptr<SseChannel>& channel) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return false;
  streams_.emplace(channel.get(), channel);
  return true;
}

void LiveAnswers::RemoveStream(const SseChannel* channel) {
  std::lock_guard<std::mutex> lock(mu_);
  streams_.erase(channel);
}

void LiveAnswers::CloseAll() {
  std::vector<std::shared_ptr<HttpSession>> requests;
  std::vector<std::shared_ptr<SseChannel>> streams;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    for (const auto& [key, weak] : requests_) {
      if (auto request = weak.lock()) requests.push_back(std::move(request));
    }
    for (const auto& [key, weak] : streams_) {
      if (auto stream = weak.lock()) streams.push_back(std::move(stream));
    }
    requests_.clear();
    streams_.clear();
  }
  // Requests first: a listen stream's closing result must reach its channel before it ends.
  for (const auto& request : requests) {
    request->connection().EndSubscriptions();
    request->End();
  }
  for (const auto& stream : streams) stream->Finish();
}

// --- McpRoutes
// ------------------------------------------------------------------------------------

McpRoutes::McpRoutes(mcp::McpServer& server, const HttpOptions& options,
                     SessionTable<HttpSession>& sessions, LiveAnswers& live)
    : server_(server),
      options_(options),
      policy_(AllowedHosts(options)),
      sessions_(sessions),
      live_(live) {}

void McpRoutes::Install(httplib::Server& http) {
  http.set_pre_routing_handler([this](const Request& req, Response& res) {
    return AllowRequest(req, res) ? Handled::Unhandled : Handled::Handled;
  });
  http.set_error_handler(
      httplib::Server::HandlerWithResponse([this](const Request&, Response& res) {
        return RewriteError(res) ? Handled::Handled : Handled::Unhandled;
      }));
  http.set_exception_handler(AnswerException);
  http.Get("/healthz", [](const Request&, Response& res) { res.set_content("ok", "text/plain"); });
  InstallGalleryRoute(http, options_.gallery_page);
  http.Post(kEndpoint, [this](const Request& req, Response& res,
                              const httplib::ContentReader& reader) { Post(req, res, reader); });
  http.Get(kEndpoint, [this](const Request& req, Response& res) { Get(req, res); });
  http.Delete(kEndpoint, [this](const Request& req, Response& res) { Delete(req, res); });
  http.Put(kEndpoint, NotAllowed);
  http.Patch(kEndpoint, NotAllowed);
  http.Options(kEndpoint, NotAllowed);
}

std::string McpRoutes::PayloadTooLarge() const {
  return "Payload Too Large: the limit is " + std::to_string(options_.max_body_bytes) + " bytes";
}

std::string McpRoutes::GateRefusalBody(int status) const {
  std::string message = "Request Header Fields Too Large";
  if (status == 408) {
    message = "Request Timeout: the request head did not arrive within " +
              std::to_string(options_.header_timeout.count()) + " ms";
  } else if (status == 413) {
    message = PayloadTooLarge();
  }
  return mcp::ErrorResponseText(nullptr, TransportError(kBadRequest, std::move(message)));
}

// Host/Origin allow-list and bearer token, before any body is read. False: refused (403, 401).
bool McpRoutes::AllowRequest(const Request& req, Response& res) const {
  const bool gallery = req.path == kGalleryPath;
  if (req.path != kEndpoint && !gallery) return true;
  if (!policy_.HostAllowed(req.get_header_value("Host")) ||
      !policy_.OriginAllowed(req.get_header_value("Origin"))) {
    log::Warn(kLog, "refused a request with Host '" + req.get_header_value("Host") + "', Origin '" +
                        req.get_header_value("Origin") + "'");
    Refuse(res, 403, TransportError(kBadRequest, "Forbidden: Host or Origin not allowed"), nullptr,
           ModernHeader(req));
    return false;
  }
  // The gallery page holds no data: what it shows comes through /mcp, with the token.
  if (gallery || options_.auth_token.empty() ||
      BearerTokenMatches(req.get_header_value("Authorization"), options_.auth_token)) {
    return true;
  }
  res.set_header("WWW-Authenticate", "Bearer realm=\"imgmcp\"");
  Refuse(res, 401, TransportError(kBadRequest, "Unauthorized: a valid bearer token is required"),
         nullptr, ModernHeader(req));
  return false;
}

// httplib's own 413 (a body over the limit it caught itself) gets the JSON-RPC body.
bool McpRoutes::RewriteError(Response& res) const {
  if (res.status != 413 || !res.body.empty()) return false;
  ReplyError(res, 413, kBadRequest, PayloadTooLarge());
  return true;
}

// --- POST ---------------------------------------------------------------------------------------

void McpRoutes::Post(const Request& req, Response& res, const httplib::ContentReader& reader) {
  std::string text;
  if (!ReadBody(req, reader, res, &text) || !MediaTypesOk(req, res)) return;
  mcp::ParsedMessage parsed = mcp::ParseMessageText(text);
  if (parsed.error) return Refuse(res, 400, *parsed.error);
  PostedMessage posted(std::move(parsed.message));
  if (!posted.batch) {  // one message: which era serves it (a batch is always legacy)
    const mcp::RequestFacts& facts = posted.facts.front();
    const McpHeaders headers = McpHeadersOf(req);
    const EraChoice era = ChooseEra(facts, headers);
    if (era.refusal) return Refuse(res, 400, *era.refusal, facts.id, /*modern=*/true);
    if (era.era == mcp::Era::kModern) return ServeModern(headers, res, std::move(posted));
  }
  ServeLegacy(req, res, std::move(posted));
}

// The body is read here, never past the limit (chunked and length-less bodies included); a body
// left unread ends the connection. False: refused (413, 400).
bool McpRoutes::ReadBody(const Request& req, const httplib::ContentReader& reader, Response& res,
                         std::string* body) const {
  switch (ReadCappedBody(req, reader, options_.max_body_bytes, body)) {
    case BodyRead::kOk:
      return true;
    case BodyRead::kTooLarge:
      res.set_header("Connection", "close");
      ReplyError(res, 413, kBadRequest, PayloadTooLarge());
      return false;
    case BodyRead::kUnreadable:
      res.set_header("Connection", "close");
      ReplyError(res, 400, kBadRequest,
                 "Bad Request: the body could not be read (malformed chunked framing, or the "
                 "client stopped sending)");
      return false;
  }
  return false;
}

// A modern (2026-07-28) request: no session; it is served by a connection of its own, which lives
// as long as its answer (any replica can serve it).
void McpRoutes::ServeModern(const McpHeaders& headers, Response& res, PostedMessage posted) {
  const mcp::RequestFacts& facts = posted.facts.front();
  if (auto refusal = CheckModernHeaders(facts, headers)) {
    return Refuse(res, 400, *refusal, facts.id, /*modern=*/true);
  }
  if (facts.kind != Kind::kRequest) {
    // The only client notification is notifications/cancelled, which on this transport means
    // nothing: closing a request's stream is what cancels it. Accepted and dropped.
    res.status = 202;
    return;
  }
  auto request = std::make_shared<HttpSession>(
      "", SessionOptions{/*resumable=*/false, options_.sse_retry, 0, 0});
  request->Attach(server_.Connect(*request, mcp::ConnectionMode::kModernOnly));
  auto exchange = request->BeginExchange({facts.id}, /*batch=*/false);
  if (!live_.AddRequest(request)) {
    request->End();
    return Refuse(res, 503, Stopping(), facts.id, /*modern=*/true);
  }
  request->connection().HandleJson(std::move(posted.body));
  HttpSession::Answer answer = request->AwaitAnswer(exchange, posted.StreamAfter());
  if (answer.session_closed) {
    live_.RemoveRequest(request.get());
    return Refuse(res, 503, Stopping(), facts.id, /*modern=*/true);
  }
  if (!answer.json) return Stream(res, request, std::move(answer.sse), /*modern=*/true);
  request->End();
  live_.RemoveRequest(request.get());
  res.status = answer.error_code
                   ? ModernErrorStatus(*answer.error_code, answer.rejected_before_dispatch)
                   : 200;
  SetJsonBody(res, std::move(*answer.json));
}

// A legacy message or batch: served by the session it names, or by a new one for initialize.
void McpRoutes::ServeLegacy(const Request& req, Response& res, PostedMessage posted) {
  const bool opens = FindHeader(req, kSessionHeader) == nullptr && posted.IsInitialize();
  std::shared_ptr<HttpSession> session;
  if (opens) {
    session = OpenSession();
  } else {
    session = FindSession(req, res);
    if (!session || !VersionOk(req, res)) return;
  }
  if (posted.RefuseMalformed(res, *session)) return;
  const std::vector<Json> ids = posted.RequestIds();
  if (ids.empty()) {  // notifications and responses only
    session->connection().HandleJson(std::move(posted.body));
    res.status = 202;
    return;
  }
  Json duplicate;
  auto exchange = session->BeginExchange(ids, posted.batch, &duplicate);
  if (!exchange) {
    return Refuse(res, 409, mcp::DuplicateRequestIdError(duplicate),
                  posted.batch ? Json(nullptr) : ids.front());
  }
  const auto stream_after = posted.StreamAfter();
  session->connection().HandleJson(std::move(posted.body));
  HttpSession::Answer answer = session->AwaitAnswer(exchange, stream_after);
  if (answer.session_closed) return SessionNotFound(res);
  if (opens && !KeepNewSession(res, session)) return;
  ReplyLegacy(res, session, std::move(answer));
}

std::shared_ptr<HttpSession> McpRoutes::OpenSession() {
  auto session = std::make_shared<HttpSession>(
      RandomHex(16), SessionOptions{/*resumable=*/true, options_.sse_retry,
                                    options_.replay_max_events, options_.replay_max_bytes});
  session->Attach(server_.Connect(*session));
  return session;
}

// A session whose initialize was answered joins the table (the longest idle one may make room);
// a refused initialize leaves no session behind. False: the table is full of busy sessions (503).
bool McpRoutes::KeepNewSession(Response& res, const std::shared_ptr<HttpSession>& session) {
  if (!session->connection().initialized()) {
    session->End();
    return true;
  }
  auto insertion = sessions_.Insert(session->id(), session);
  if (!insertion.inserted) {
    session->End();
    ReplyError(res, 503, kBadRequest, "Service Unavailable: too many sessions, all of them busy");
    return false;
  }
  if (insertion.evicted) {
    log::Info(kLog, "session " + insertion.evicted->id().substr(0, 8) +
                        "… ended to make room (the longest idle of " +
                        std::to_string(options_.max_sessions) + ")");
    insertion.evicted->End();
  }
  log::Info(kLog, "session " + session->id().substr(0, 8) + "… started (" +
                      std::to_string(sessions_.size()) + " open)");
  return true;
}

void McpRoutes::ReplyLegacy(Response& res, const std::shared_ptr<HttpSession>& session,
                            HttpSession::Answer answer) {
  if (!answer.json) return Stream(res, session, std::move(answer.sse), /*modern=*/false);
  res.status = 200;
  if (session->connection().initialized()) res.set_header(kSessionHeader, session->id());
  SetJsonBody(res, std::move(*answer.json));
}

// --- GET and DELETE -----------------------------------------------------------------------------

// A legacy session's standalone stream, or the rest of a stream it lost (Last-Event-ID).
void McpRoutes::Get(const Request& req, Response& res) {
  if (IsModernSessionless(req)) return RefuseModernGetOrDelete(res);
  if (!AcceptsMediaType(req.get_header_value("Accept"), kEventStream)) {
    return ReplyError(res, 406, kBadRequest,
                      "Not Acceptable: Client must accept text/event-stream");
  }
  auto session = FindSession(req, res);
  if (!session || !VersionOk(req, res)) return;
  auto last = ParseEventId(req.get_header_value("Last-Event-ID"));
  std::shared_ptr<SseChannel> channel =
      last ? session->Resume(*last) : session->OpenStandaloneStream();
  if (!channel) return SessionNotFound(res);
  Stream(res, session, std::move(channel), /*modern=*/false);
}

// Ends a legacy session.
void McpRoutes::Delete(const Request& req, Response& res) {
  if (IsModernSessionless(req)) return RefuseModernGetOrDelete(res);
  const std::string id = req.get_header_value(kSessionHeader);
  if (id.empty()) return ReplyError(res, 400, kBadRequest, kSessionRequired);
  if (!VersionOk(req, res)) return;
  auto session = sessions_.Remove(id);
  if (!session) return SessionNotFound(res);
  session->End();
  log::Info(kLog, "session " + id.substr(0, 8) + "… ended by the client");
  res.status = 200;
}

// --- shared steps -------------------------------------------------------------------------------

std::shared_ptr<HttpSession> McpRoutes::FindSession(const Request& req, Response& res) {
  const std::string* id = FindHeader(req, kSessionHeader);
  if (id == nullptr || id->empty()) {
    ReplyError(res, 400, kBadRequest, kSessionRequired);
    return nullptr;
  }
  auto session = sessions_.Find(*id);
  if (!session) SessionNotFound(res);
  return session;
}

// A legacy session outlives its streams; a modern request's session is the request itself and
// ends with its stream — a client closing the stream cancels the request (2026-07-28
// basic/patterns/cancellation). The connection's thread waits on the channel for data or the
// keep-alive interval; a stopping server finishes the channel (LiveAnswers), which wakes it.
void McpRoutes::Stream(Response& res, const std::shared_ptr<HttpSession>& session,
                       std::shared_ptr<SseChannel> channel, bool modern) {
  res.status = 200;
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  if (!modern) res.set_header(kSessionHeader, session->id());
  if (!live_.AddStream(channel)) channel->Finish();  // stopping: what is queued, then the end
  const auto keepalive = std::max<std::chrono::milliseconds>(options_.sse_keepalive, kMinKeepAlive);
  std::weak_ptr<HttpSession> weak = session;
  std::shared_ptr<HttpSession> owned = modern ? session : nullptr;
  res.set_chunked_content_provider(
      kEventStream,
      [channel, keepalive](size_t, httplib::DataSink& sink) {
        return PumpStream(*channel, keepalive, sink);
      },
      [this, channel, weak, owned](bool) {
        channel->Abort();
        live_.RemoveStream(channel.get());
        if (owned) {
          owned->End();
          live_.RemoveRequest(owned.get());
        } else if (auto s = weak.lock()) {
          s->Detach(channel);
        }
      });
}

}  // namespace imgmcp::http
