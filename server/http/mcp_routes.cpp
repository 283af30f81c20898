#include "server/http/mcp_routes.h"

#include <algorithm>
#include <array>
#include <exception>
#include <utility>
#include <variant>

#include "common/log.h"
#include "common/random.h"
#include "common/sha256.h"
#include "mcp/connection.h"
#include "mcp/json_rpc.h"
#include "mcp/method_table.h"
#include "mcp/protocol_version.h"
#include "mcp/server.h"
#include "server/http/gallery_route.h"
#include "server/http/gated_server.h"
#include "server/http/listen_address.h"
#include "server/http/log_tag.h"
#include "server/http/metrics_route.h"
#include "server/http/request_head.h"

namespace imgmcp::http {

namespace {

using httplib::Request;
using httplib::Response;
using Handled = httplib::Server::HandlerResponse;
using Kind = mcp::IncomingMessage::Kind;

constexpr char kEndpoint[] = "/mcp";
// Health checks: like /healthz, /readyz needs no Host/Origin or token (a load balancer's checks
// send neither) and says nothing about sessions.
constexpr char kHealthPath[] = "/healthz";
constexpr char kReadyPath[] = "/readyz";
constexpr char kSessionHeader[] = "Mcp-Session-Id";
constexpr char kJson[] = "application/json";
constexpr char kEventStream[] = "text/event-stream";
constexpr int kSessionNotFound = -32001;
constexpr int kBadRequest = -32000;
constexpr char kSessionRequired[] = "Bad Request: Mcp-Session-Id header is required";
constexpr char kBatchNeedsSession[] =
    "batches are not part of protocol revision 2026-07-28; a batch belongs to a legacy session "
    "that negotiated 2025-03-26 (initialize, then send its Mcp-Session-Id)";
// Headers a request may carry once: with two, a proxy and imgmcp could each act on a different one.
// The MCP routing headers are refused as a header mismatch (-32020), the others as a bad request.
constexpr std::array<Header, 3> kRoutingHeaders = {Header::kMcpProtocolVersion, Header::kMcpMethod,
                                                   Header::kMcpName};
constexpr std::array<Header, 6> kSingleHeaders = {Header::kHost,          Header::kOrigin,
                                                  Header::kAuthorization, Header::kMcpSessionId,
                                                  Header::kContentType,   Header::kLastEventId};
// The body's framing: httplib frames by its percent-decoded values, the connection gate by the
// bytes, so a value they could read differently (two lines, a '%') ends the connection.
constexpr std::array<Header, 2> kFramingHeaders = {Header::kContentLength,
                                                   Header::kTransferEncoding};
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

// A per-person limit's refusal is 429 with Retry-After (mcp/call_limiter.h), in both eras.
void SetTooManyRequests(Response& res, int error_code, const std::string& json) {
  if (auto seconds = TooManyRequestsRetryAfter(error_code, json)) {
    res.status = 429;
    res.set_header("Retry-After", std::to_string(*seconds));
  }
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

mcp::RpcError StoppedDuringCall() {
  return mcp::InternalError("Internal error: the server stopped while the request ran");
}

// The headers of the request this thread serves, as the client sent them (request_head.h). Every
// route runs inside a GatedServer request (AllowRequest refuses anything else).
const RequestHeaders& Headers() {
  static const RequestHeaders kNone;
  const ServedRequest* served = CurrentRequest();
  return served != nullptr ? served->headers : kNone;
}

McpHeaders McpHeadersOf(const RequestHeaders& headers) {
  return McpHeaders{headers.Get(Header::kMcpProtocolVersion), headers.Get(Header::kMcpMethod),
                    headers.Get(Header::kMcpName)};
}

// The request names a modern protocol version in its MCP-Protocol-Version header.
bool ModernHeader(const RequestHeaders& headers) {
  auto version = headers.Get(Header::kMcpProtocolVersion);
  return version && mcp::IsModernVersionName(*version);
}

// A GET or DELETE from a modern client: no session header, a modern version header.
bool IsModernSessionless(const RequestHeaders& headers) {
  return !headers.Get(Header::kMcpSessionId) && ModernHeader(headers);
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
bool VersionOk(const RequestHeaders& headers, Response& res) {
  const auto version = headers.Get(Header::kMcpProtocolVersion);
  if (!version || mcp::IsSupportedProtocolVersion(*version)) return true;
  ReplyError(
      res, 400, kBadRequest,
      "Bad Request: " + mcp::UnsupportedVersionText(mcp::Quoted(*version), mcp::Era::kLegacy));
  return false;
}

// True when some Accept line of the request admits `media_type`.
bool Accepts(const RequestHeaders& headers, std::string_view media_type) {
  for (size_t i = 0; i < headers.Count(Header::kAccept); ++i) {
    if (AcceptsMediaType(*headers.Get(Header::kAccept, i), media_type)) return true;
  }
  return false;
}

// A POST must accept both answer forms and send JSON. Answers 406 or 415 itself when not.
bool MediaTypesOk(const RequestHeaders& headers, Response& res) {
  if (!Accepts(headers, kJson) || !Accepts(headers, kEventStream)) {
    ReplyError(res, 406, kBadRequest,
               "Not Acceptable: Client must accept both application/json and text/event-stream");
    return false;
  }
  if (!IsJsonContentType(headers.Get(Header::kContentType).value_or(""))) {
    ReplyError(res, 415, kBadRequest,
               "Unsupported Media Type: Content-Type must be application/json");
    return false;
  }
  return true;
}

void AnswerException(const Request&, Response& res, const std::exception_ptr& ep) {
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
    case SseChannel::PullResult::kHangup:  // only a modern request's stream watches its client
      log::Debug(kLog, "cancelled a streamed request: its client closed the connection");
      return false;
  }
  return false;
}

// The host names the server answers to besides the loopback names: its bind address, unless that
// is a wildcard.
std::vector<std::string> OwnHosts(const HttpOptions& options) {
  if (options.host.empty() || options.host == "0.0.0.0" || options.host == "::" ||
      options.host == "[::]") {
    return {};
  }
  return {options.host.find(':') != std::string::npos && options.host.front() != '['
              ? "[" + options.host + "]"
              : options.host};
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
  MutexLock lock(mu_);
  if (closed_) return false;
  requests_.emplace(request.get(), request);
  return true;
}

std::vector<std::shared_ptr<HttpSession>> LiveAnswers::Requests() {
  std::vector<std::shared_ptr<HttpSession>> requests;
  MutexLock lock(mu_);
  for (const auto& [key, weak] : requests_) {
    if (auto request = weak.lock()) requests.push_back(std::move(request));
  }
  return requests;
}

void LiveAnswers::RemoveRequest(const HttpSession* request) {
  MutexLock lock(mu_);
  requests_.erase(request);
}

bool LiveAnswers::AddStream(const std::shared_ptr<SseChannel>& channel) {
  MutexLock lock(mu_);
  if (closed_) return false;
  streams_.emplace(channel.get(), channel);
  PublishStreams();
  return true;
}

void LiveAnswers::RemoveStream(const SseChannel* channel) {
  {
    MutexLock lock(mu_);
    streams_.erase(channel);
    PublishStreams();
  }
  streams_cv_.notify_all();
}

void LiveAnswers::PublishStreams() const {
  if (metrics_ != nullptr) metrics_->SetOpenSseStreams(static_cast<int64_t>(streams_.size()));
}

void LiveAnswers::AwaitStreamsEnded(std::chrono::milliseconds timeout) {
  MutexLock lock(mu_);
  streams_cv_.wait_for(lock, timeout, [this] {
    mu_.AssertHeld();
    return std::all_of(streams_.begin(), streams_.end(),
                       [](const auto& entry) { return entry.second.expired(); });
  });
}

void LiveAnswers::HintRetry(const std::string& frame) {
  std::vector<std::shared_ptr<SseChannel>> streams;
  {
    MutexLock lock(mu_);
    for (const auto& [key, weak] : streams_) {
      if (auto stream = weak.lock()) streams.push_back(std::move(stream));
    }
  }
  for (const auto& stream : streams) stream->Push(frame);
}

void LiveAnswers::CloseAll() {
  std::vector<std::shared_ptr<HttpSession>> requests;
  std::vector<std::shared_ptr<SseChannel>> streams;
  {
    MutexLock lock(mu_);
    closed_ = true;
    for (const auto& [key, weak] : requests_) {
      if (auto request = weak.lock()) requests.push_back(std::move(request));
    }
    for (const auto& [key, weak] : streams_) {
      if (auto stream = weak.lock()) streams.push_back(std::move(stream));
    }
    requests_.clear();  // streams_ stays: each leaves as its response ends (AwaitStreamsEnded)
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
                     SessionTable<HttpSession>& sessions, LiveAnswers& live, DrainState& drain)
    : server_(server),
      options_(options),
      policy_(options.extra_allowed_hosts, OwnHosts(options), options.port),
      token_owner_(
          options.auth_token.empty() ? "" : Sha256Hex("imgmcp task owner\n" + options.auth_token)),
      sessions_(sessions),
      live_(live),
      drain_(drain) {}

void McpRoutes::Install(httplib::Server& http) {
  http.set_pre_routing_handler([this](const Request& req, Response& res) {
    return AllowRequest(req, res) ? Handled::Unhandled : Handled::Handled;
  });
  http.set_error_handler(
      httplib::Server::HandlerWithResponse([this](const Request&, Response& res) {
        return RewriteError(res) ? Handled::Handled : Handled::Unhandled;
      }));
  http.set_exception_handler(AnswerException);
  http.Get(kHealthPath, [](const Request&, Response& res) { res.set_content("ok", "text/plain"); });
  InstallMetricsRoute(http, options_.metrics);
  if (options_.metrics_only) return;
  http.Get(kReadyPath, [this](const Request&, Response& res) { Ready(res); });
  InstallGalleryRoute(http, options_.gallery_page);
  if (options_.oauth) {
    // RFC 9728: answered without a token; the path-suffixed form is the one clients try first.
    http.Get(R"(/\.well-known/oauth-protected-resource(/.*)?)",
             [this](const Request& req, Response& res) {
               std::optional<std::string> metadata = oauth_->MetadataAt(req.path);
               if (!metadata) return ReplyError(res, 404, kBadRequest, "Not Found");
               res.set_header("Cache-Control", "max-age=300");
               res.set_header("Access-Control-Allow-Origin", "*");
               SetJsonBody(res, std::move(*metadata));
             });
  }
  http.Post(kEndpoint, [this](const Request& req, Response& res,
                              const httplib::ContentReader& reader) { Post(req, res, reader); });
  http.Get(kEndpoint, [this](const Request& req, Response& res) { Get(req, res); });
  http.Delete(kEndpoint, [this](const Request& req, Response& res) { Delete(req, res); });
  http.Put(kEndpoint, NotAllowed);
  http.Patch(kEndpoint, NotAllowed);
  http.Options(kEndpoint, NotAllowed);
}

Status McpRoutes::SetPort(int port) {
  policy_ = OriginPolicy(options_.extra_allowed_hosts, OwnHosts(options_), port);
  if (options_.oauth && !options_.metrics_only) {
    ASSIGN_OR_RETURN(oauth_, OAuthGate::Create(*options_.oauth, EndpointUrl(options_.host, port),
                                               options_.gallery_links));
  }
  return Status::Ok();
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

// Before routing, and before any body is read: a head httplib and imgmcp could read differently
// (400), then for /mcp, /gallery and /metrics the Host/Origin allow-list (403) and the bearer
// token (401).
bool McpRoutes::AllowRequest(const Request& req, Response& res) const {
  const ServedRequest* served = CurrentRequest();
  if (served == nullptr) {  // not served by a GatedServer: none of the checks below could run
    Refuse(res, 500, mcp::InternalError("Internal error: the request head is not available"));
    return false;
  }
  const RequestHeaders& headers = served->headers;
  if (!HeadReadable(headers, res)) return false;
  if (req.path != kHealthPath && req.path != kReadyPath) drain_.NoteRequest();
  const bool gallery = req.path == kGalleryPath;
  if (req.path != kEndpoint && !gallery && req.path != kMetricsPath) return true;
  if (!HeadersSingle(headers, res)) return false;
  const std::string_view host = headers.Get(Header::kHost).value_or("");
  const std::string_view origin = headers.Get(Header::kOrigin).value_or("");
  if (!policy_.HostAllowed(host) || !policy_.OriginAllowed(origin)) {
    refused_origin_log_.Write(log::Level::kWarning, kLog,
                              "refused a request with Host '" + log::Clip(host) + "', Origin '" +
                                  log::Clip(origin) + "'");
    Refuse(res, 403, TransportError(kBadRequest, "Forbidden: Host or Origin not allowed"), nullptr,
           ModernHeader(headers));
    return false;
  }
  // The gallery page holds no data: what it shows comes through /mcp, with the token.
  return gallery || Authorized(headers, res);
}

bool McpRoutes::Authorized(const RequestHeaders& headers, Response& res) const {
  const std::string_view authorization = headers.Get(Header::kAuthorization).value_or("");
  if (oauth_) {
    auto admitted = oauth_->Admit(authorization);
    if (auto* principal = std::get_if<oauth::Principal>(&admitted)) {
      CurrentRequest()->principal = std::move(*principal);
      return true;
    }
    const AuthRefusal& refusal = std::get<AuthRefusal>(admitted);
    if (refusal.token_refused && options_.audit != nullptr) {
      mcp::AuditEntry entry;  // the reason names no part of the token
      entry.action = "token";
      entry.outcome = "refused: " + refusal.message;
      options_.audit->Record(entry);
    }
    if (!refusal.challenge.empty()) res.set_header("WWW-Authenticate", refusal.challenge);
    if (refusal.status == 503) res.set_header("Retry-After", "5");
    Refuse(res, refusal.status, TransportError(kBadRequest, refusal.message), nullptr,
           ModernHeader(headers));
    return false;
  }
  if (options_.auth_token.empty() || BearerTokenMatches(authorization, options_.auth_token)) {
    return true;
  }
  const std::string_view host = headers.Get(Header::kHost).value_or("");
  refused_token_log_.Write(
      log::Level::kWarning, kLog,
      "refused a request without the bearer token (Host '" + log::Clip(host) + "')");
  res.set_header("WWW-Authenticate", "Bearer realm=\"imgmcp\"");
  Refuse(res, 401, TransportError(kBadRequest, "Unauthorized: a valid bearer token is required"),
         nullptr, ModernHeader(headers));
  return false;
}

std::string McpRoutes::RequestOwner() const {
  if (!oauth_) return token_owner_;
  const ServedRequest* served = CurrentRequest();
  return served != nullptr && served->principal ? OAuthGate::OwnerOf(*served->principal) : "";
}

mcp::Caller McpRoutes::RequestCaller() const {
  mcp::Caller caller;
  caller.owner = RequestOwner();
  if (!oauth_) return caller;  // one local principal: sessions are everyone's, as before
  const ServedRequest* served = CurrentRequest();
  if (served == nullptr || !served->principal) return caller;
  caller.principal = served->principal->key;
  caller.issuer = served->principal->issuer;
  caller.subject = served->principal->subject;
  caller.client_id = served->principal->client_id;
  caller.only_session = served->principal->only_session;
  return caller;
}

bool McpRoutes::RefuseForScope(Response& res, const PostedMessage& posted) const {
  if (!oauth_) return false;
  const ServedRequest* served = CurrentRequest();
  if (served == nullptr || !served->principal) {  // AllowRequest admitted no one: cannot happen
    Refuse(res, 500, mcp::InternalError("Internal error: the request has no principal"));
    return true;
  }
  auto refusal =
      oauth_->CheckScopes(*served->principal, posted.facts, posted.body, server_.tools());
  if (!refusal) return false;
  res.set_header("WWW-Authenticate", refusal->challenge);
  Refuse(res, refusal->status, TransportError(kBadRequest, std::move(refusal->message)),
         posted.batch ? Json(nullptr) : posted.facts.front().id, ModernHeader(Headers()));
  return true;
}

// Every route: a head with a malformed header line, or body framing headers that httplib (which
// percent-decodes them) and the connection gate (which does not) could read differently, is
// refused (400) and ends the connection. False: refused.
bool McpRoutes::HeadReadable(const RequestHeaders& headers, Response& res) const {
  std::string problem;
  if (headers.problem() != nullptr) {
    problem = headers.problem();
  } else if (auto repeated = headers.Repeated(kFramingHeaders)) {
    problem = "more than one " + std::string(HeaderName(*repeated)) + " header";
  } else {
    for (Header framing : kFramingHeaders) {
      if (headers.Get(framing).value_or("").find('%') != std::string_view::npos) {
        problem = "a percent sign in the " + std::string(HeaderName(framing)) + " header";
      }
    }
  }
  if (problem.empty()) return true;
  refused_head_log_.Write(log::Level::kWarning, kLog, "refused a request head: " + problem);
  res.set_header("Connection", "close");
  ReplyError(res, 400, kBadRequest, "Bad Request: " + problem);
  return false;
}

// /mcp and /gallery: a header that must come once came twice (400; -32020 for the MCP routing
// headers). False: refused.
bool McpRoutes::HeadersSingle(const RequestHeaders& headers, Response& res) const {
  if (auto repeated = headers.Repeated(kRoutingHeaders)) {
    Refuse(res, 400,
           mcp::HeaderMismatch("more than one " + std::string(HeaderName(*repeated)) + " header"),
           nullptr, /*modern=*/true);
    return false;
  }
  if (auto repeated = headers.Repeated(kSingleHeaders)) {
    ReplyError(res, 400, kBadRequest,
               "Bad Request: more than one " + std::string(HeaderName(*repeated)) + " header");
    return false;
  }
  return true;
}

// httplib's own 413 (a body over the limit it caught itself) gets the JSON-RPC body.
bool McpRoutes::RewriteError(Response& res) const {
  if (res.status != 413 || !res.body.empty()) return false;
  ReplyError(res, 413, kBadRequest, PayloadTooLarge());
  return true;
}

// --- POST ---------------------------------------------------------------------------------------

namespace {

// A W3C `traceparent` header is the request's trace context unless its params._meta names one
// (SEP-414): copied into params._meta.traceparent of a single request, where the method
// dispatch reads it (mcp::ReadTraceParent); an invalid one is ignored there.
void AdoptTraceParent(const RequestHeaders& headers, Json& message) {
  const std::optional<std::string_view> header = headers.Get(Header::kTraceParent);
  if (!header || !message.is_object()) return;
  auto params = message.find("params");
  if (params == message.end() || !params->is_object()) return;
  Json& meta = (*params)["_meta"];
  if (meta.is_null()) meta = Json::object();
  if (meta.is_object() && !meta.contains("traceparent")) meta["traceparent"] = std::string(*header);
}

}  // namespace

void McpRoutes::Post(const Request&, Response& res, const httplib::ContentReader& reader) {
  const RequestHeaders& headers = Headers();
  std::string text;
  if (!ReadBody(headers, reader, res, &text) || !MediaTypesOk(headers, res)) return;
  mcp::ParsedMessage parsed = mcp::ParseMessageText(text);
  if (parsed.error) return Refuse(res, 400, *parsed.error);
  AdoptTraceParent(headers, parsed.message);
  PostedMessage posted(std::move(parsed.message));
  if (RefuseForScope(res, posted) || RefuseWhileDraining(res, posted)) return;
  std::shared_ptr<void> busy = drain_.Busy();  // until answered (a stream: until it ends)
  if (posted.batch) return ServeLegacy(headers, res, std::move(posted), std::move(busy));
  const mcp::RequestFacts& facts = posted.facts.front();
  const McpHeaders mcp_headers = McpHeadersOf(headers);
  const EraChoice era = ChooseEra(facts, mcp_headers);
  if (era.refusal) return Refuse(res, 400, *era.refusal, facts.id, /*modern=*/true);
  if (era.era == mcp::Era::kModern) {
    return ServeModern(mcp_headers, res, std::move(posted), std::move(busy));
  }
  ServeLegacy(headers, res, std::move(posted), std::move(busy));
}

// A draining server past its notice window starts no new request: 503 before anything is
// dispatched (so nothing ran and nothing was committed; a proxy may send it to another replica),
// and the connection closes. Notifications and responses (a client answering a server→client
// request of a call in progress) still go through. True: refused.
bool McpRoutes::RefuseWhileDraining(Response& res, const PostedMessage& posted) const {
  if (!drain_.refusing() || posted.RequestIds().empty()) return false;
  const bool modern = !posted.batch && ModernHeader(Headers());
  res.set_header("Connection", "close");
  res.set_header("Retry-After", "1");
  Refuse(res, 503, Stopping(), posted.batch ? Json(nullptr) : posted.facts.front().id, modern);
  return true;
}

// The body is read here, never past the limit (chunked and length-less bodies included); a body
// left unread ends the connection. False: refused (413, 400).
bool McpRoutes::ReadBody(const RequestHeaders& headers, const httplib::ContentReader& reader,
                         Response& res, std::string* body) const {
  switch (ReadCappedBody(headers, reader, options_.max_body_bytes, body)) {
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
void McpRoutes::ServeModern(const McpHeaders& headers, Response& res, PostedMessage posted,
                            std::shared_ptr<void> busy) {
  const mcp::RequestFacts& facts = posted.facts.front();
  if (auto refusal = CheckModernHeaders(facts, headers)) {
    return Refuse(res, 400, *refusal, facts.id, /*modern=*/true);
  }
  if (auto refusal = CheckArgumentHeaders(Headers(), posted, /*modern=*/true)) {
    return Refuse(res, 400, *refusal, facts.id, /*modern=*/true);
  }
  if (facts.kind != Kind::kRequest) {
    // The only client notification is notifications/cancelled, which on this transport means
    // nothing: closing a request's stream is what cancels it. Accepted and dropped.
    res.status = 202;
    return;
  }
  const ServedRequest* served = CurrentRequest();
  auto request = std::make_shared<HttpSession>(
      "", SessionOptions{/*resumable=*/false, options_.sse_retry, 0, 0, served->socket});
  auto connection = server_.Connect(*request, mcp::ConnectionMode::kModernOnly);
  // Only an admitted caller gets here: the digest of its credentials (the bearer token, or the
  // OAuth principal) is its task owner.
  connection->SetCaller(RequestCaller());
  request->Attach(std::move(connection));
  auto exchange = request->BeginExchange({facts.id}, /*batch=*/false);
  if (!live_.AddRequest(request)) {
    request->End();
    return Refuse(res, 503, Stopping(), facts.id, /*modern=*/true);
  }
  request->connection().HandleJson(std::move(posted.body));
  HttpSession::Answer answer = request->AwaitAnswer(exchange, posted.StreamAfter());
  if (answer.client_gone) return CancelForHangup(res, request, facts);
  if (answer.session_closed) {
    // Not 503: that says nothing ran (a proxy may send it again elsewhere), and this request
    // was dispatched, then cancelled by the stopping server.
    live_.RemoveRequest(request.get());
    return Refuse(res, 500, StoppedDuringCall(), facts.id, /*modern=*/true);
  }
  if (!answer.json) {
    return Stream(res, request, answer.sse, /*modern=*/true, std::move(busy));
  }
  request->End();
  live_.RemoveRequest(request.get());
  res.status = answer.error_code
                   ? ModernErrorStatus(*answer.error_code, answer.rejected_before_dispatch)
                   : 200;
  if (answer.error_code) SetTooManyRequests(res, *answer.error_code, *answer.json);
  SetJsonBody(res, std::move(*answer.json));
}

std::optional<mcp::RpcError> McpRoutes::CheckArgumentHeaders(const RequestHeaders& headers,
                                                             const PostedMessage& posted,
                                                             bool modern) const {
  const mcp::RequestFacts& facts = posted.facts.front();
  if (posted.batch || facts.kind != Kind::kRequest || facts.method != mcp::methods::kToolsCall ||
      !facts.name) {
    return std::nullopt;  // a batch has no headers of its own for each call
  }
  std::call_once(param_headers_once_, [this] {
    for (const mcp::ToolSpec* tool : server_.tools().All()) {
      std::vector<ParamHeader> declared = ParamHeadersOf(tool->definition.input_schema);
      if (!declared.empty()) param_headers_.emplace(tool->definition.name, std::move(declared));
    }
  });
  // An unknown tool is the core's to answer; most tools declare no headers.
  const auto declared = param_headers_.find(*facts.name);
  if (declared == param_headers_.end()) return std::nullopt;
  static const Json kNoArguments;
  const Json& params = posted.body.at("params");
  const auto arguments = params.find("arguments");
  return CheckParamHeaders(declared->second, arguments == params.end() ? kNoArguments : *arguments,
                           headers, modern);
}

// The client of a modern request closed its connection before the answer: that cancels the request
// (2026-07-28 basic/patterns/cancellation). Ending its connection stops the call wherever it is —
// waiting for its session's turn, or in the backend — and nothing is committed.
void McpRoutes::CancelForHangup(Response& res, const std::shared_ptr<HttpSession>& request,
                                const mcp::RequestFacts& facts) {
  request->End();
  live_.RemoveRequest(request.get());
  log::Debug(kLog, "cancelled " + log::Clip(facts.method) + " request " +
                       log::Clip(mcp::IdKey(facts.id)) + ": its client closed the connection");
  res.status = 400;  // never read: nobody is there
  res.set_header("Connection", "close");
}

// A legacy message or batch: served by the session it names, or by a new one for initialize.
void McpRoutes::ServeLegacy(const RequestHeaders& headers, Response& res, PostedMessage posted,
                            std::shared_ptr<void> busy) {
  const bool named = headers.Get(Header::kMcpSessionId).has_value();
  const bool opens = !named && posted.IsInitialize();
  if (posted.batch && !named) {  // a batch without a session: most likely a 2026-07-28 client
    return Refuse(res, 400, mcp::InvalidRequest(kBatchNeedsSession), nullptr,
                  ModernHeader(headers));
  }
  std::shared_ptr<HttpSession> session;
  if (opens) {
    session = OpenSession();
  } else {
    session = FindSession(headers, res);
    if (!session || !VersionOk(headers, res)) return;
  }
  if (posted.RefuseMalformed(res, *session)) return;
  if (auto refusal = CheckArgumentHeaders(headers, posted, /*modern=*/false)) {
    return Refuse(res, 400, *refusal, posted.facts.front().id);
  }
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
  ReplyLegacy(res, session, std::move(answer), std::move(busy));
}

std::shared_ptr<HttpSession> McpRoutes::OpenSession() {
  auto session = std::make_shared<HttpSession>(
      RandomHex(16), SessionOptions{/*resumable=*/true, options_.sse_retry,
                                    options_.replay_max_events, options_.replay_max_bytes});
  auto connection = server_.Connect(*session);
  // As for modern requests: the legacy session and its tasks (2025-11-25 utility) are the
  // credentials'.
  mcp::Caller caller = RequestCaller();
  session->SetOwner(caller.owner);
  connection->SetCaller(std::move(caller));
  session->Attach(std::move(connection));
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
                            HttpSession::Answer answer, std::shared_ptr<void> busy) {
  if (!answer.json) {
    return Stream(res, session, answer.sse, /*modern=*/false, std::move(busy));
  }
  res.status = 200;
  if (answer.error_code) SetTooManyRequests(res, *answer.error_code, *answer.json);
  if (session->connection().initialized()) res.set_header(kSessionHeader, session->id());
  SetJsonBody(res, std::move(*answer.json));
}

// --- GET and DELETE -----------------------------------------------------------------------------

// A legacy session's standalone stream, or the rest of a stream it lost (Last-Event-ID).
void McpRoutes::Get(const Request&, Response& res) {
  const RequestHeaders& headers = Headers();
  if (IsModernSessionless(headers)) return RefuseModernGetOrDelete(res);
  if (!Accepts(headers, kEventStream)) {
    return ReplyError(res, 406, kBadRequest,
                      "Not Acceptable: Client must accept text/event-stream");
  }
  auto session = FindSession(headers, res);
  if (!session || !VersionOk(headers, res)) return;
  auto last = ParseEventId(headers.Get(Header::kLastEventId).value_or(""));
  std::shared_ptr<SseChannel> channel =
      last ? session->Resume(*last) : session->OpenStandaloneStream();
  if (!channel) return SessionNotFound(res);
  Stream(res, session, channel, /*modern=*/false);
}

// GET /readyz: 200 "ready" when this replica takes requests; 503 with the reason when it drains
// or its store does not answer (HttpOptions::readiness, which answers at once).
void McpRoutes::Ready(Response& res) const {
  drain_.NoteReadyProbe();
  std::optional<std::string> problem;
  if (drain_.draining()) {
    problem = "draining";
  } else if (options_.readiness) {
    problem = options_.readiness();
  }
  res.set_header("Cache-Control", "no-store");
  if (!problem) return res.set_content("ready", "text/plain");
  res.status = 503;
  res.set_content("not ready: " + *problem, "text/plain");
}

// Ends a legacy session.
void McpRoutes::Delete(const Request&, Response& res) {
  const RequestHeaders& headers = Headers();
  if (IsModernSessionless(headers)) return RefuseModernGetOrDelete(res);
  const std::string id(headers.Get(Header::kMcpSessionId).value_or(""));
  if (id.empty()) return ReplyError(res, 400, kBadRequest, kSessionRequired);
  if (!VersionOk(headers, res)) return;
  auto session = sessions_.Remove(id);
  if (!session) return SessionNotFound(res);
  session->End();
  log::Info(kLog, "session " + id.substr(0, 8) + "… ended by the client");
  res.status = 200;
}

// --- shared steps -------------------------------------------------------------------------------

std::shared_ptr<HttpSession> McpRoutes::FindSession(const RequestHeaders& headers, Response& res) {
  const std::string_view id = headers.Get(Header::kMcpSessionId).value_or("");
  if (id.empty()) {
    ReplyError(res, 400, kBadRequest, kSessionRequired);
    return nullptr;
  }
  auto session = sessions_.Find(std::string(id));
  // Another principal's session does not exist for this one (OAuth: no existence leak).
  if (session && session->owner() != RequestOwner()) session = nullptr;
  if (!session) SessionNotFound(res);
  return session;
}

// A legacy session outlives its streams; a modern request's session is the request itself and
// ends with its stream — a client closing the stream cancels the request (2026-07-28
// basic/patterns/cancellation). The connection's thread waits on the channel for data or the
// keep-alive interval; a stopping server finishes the channel (LiveAnswers), which wakes it.
void McpRoutes::Stream(Response& res, const std::shared_ptr<HttpSession>& session,
                       const std::shared_ptr<SseChannel>& channel, bool modern,
                       std::shared_ptr<void> busy) {
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
      [channel, keepalive, busy = std::move(busy)](size_t, httplib::DataSink& sink) {
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
