// The routes of the Streamable HTTP transport (HttpTransport owns the listener and its
// lifecycle): /mcp — POST (JSON-RPC in; JSON or SSE out), GET (a legacy session's standalone SSE
// stream, resumable with Last-Event-ID), DELETE (ends a legacy session) — plus /healthz and
// /readyz (DrainState, HttpOptions::readiness), the
// /gallery page (gallery_route.h) and the checks every request to /mcp or /gallery passes first
// (Host/Origin allow-list, bearer token).
//
// Each handler reads as its steps. A POST: read the body → check Accept and Content-Type → parse
// → choose the era (2026-07-28 basic/versioning) → serve it modern or legacy → reply. A legacy
// client's Mcp-Session-Id is one mcp::Connection of the shared McpServer; a modern request
// (2026-07-28, no session, headers checked against the body) gets a connection of its own for as
// long as its answer takes, so any replica can serve it.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/log.h"
#include "common/thread_annotations.h"
#include "metrics/metrics.h"
#include "server/http/drain_state.h"
#include "server/http/http_listener.h"
#include "server/http/http_session.h"
#include "server/http/oauth_gate.h"
#include "server/http/request_checks.h"
#include "server/http/request_head.h"
#include "server/http/session_table.h"
#include "server/http/sse.h"

namespace imgmcp::mcp {
class McpServer;
}  // namespace imgmcp::mcp

namespace imgmcp::http {

// The answers that outlive their handler — modern requests (each a connection of its own) and
// SSE streams — so that a stopping server can end them. Thread-safe.
class LiveAnswers {
 public:
  // `metrics` (may be null) is told the number of open streams after every change.
  explicit LiveAnswers(metrics::Metrics* metrics = nullptr) : metrics_(metrics) {}
  // False once closed (the server is stopping): the caller refuses or ends the answer itself.
  bool AddRequest(const std::shared_ptr<HttpSession>& request);
  void RemoveRequest(const HttpSession* request);
  bool AddStream(const std::shared_ptr<SseChannel>& channel);
  void RemoveStream(const SseChannel* channel);
  // The modern requests being answered (each has a connection of its own).
  std::vector<std::shared_ptr<HttpSession>> Requests();
  // Queues `frame` (RetryFrame) on every open stream, before a stopping server closes them.
  void HintRetry(const std::string& frame);
  // Ends every modern request (a listen stream gets its closing result first) and finishes every
  // stream, which wakes the connection thread waiting on it; later Add* return false. Idempotent.
  void CloseAll();
  // Waits until every stream's response has ended (its last frames written), at most `timeout`.
  void AwaitStreamsEnded(std::chrono::milliseconds timeout);

 private:
  void PublishStreams() const REQUIRES(mu_);  // under mu_

  metrics::Metrics* const metrics_;
  Mutex mu_;                                // guards closed_, requests_, streams_
  std::condition_variable_any streams_cv_;  // a stream ended
  bool closed_ GUARDED_BY(mu_) = false;
  std::map<const HttpSession*, std::weak_ptr<HttpSession>> requests_ GUARDED_BY(mu_);
  std::map<const SseChannel*, std::weak_ptr<SseChannel>> streams_ GUARDED_BY(mu_);
};

struct PostedMessage;  // one parsed POST body and the routing facts of its messages

class McpRoutes {
 public:
  // Every argument must outlive the server the routes are installed on.
  McpRoutes(mcp::McpServer& server, const HttpOptions& options, SessionTable<HttpSession>& sessions,
            LiveAnswers& live, DrainState& drain);

  // Installs every route, and the pre-routing, error and exception handlers, on `http` (a
  // GatedServer: the routes read each request's head as received, gated_server.h).
  void Install(httplib::Server& http);
  // The port the server listens on, once bound: an Origin of this server's own pages names it.
  // Before the server serves (not thread-safe). With OAuth on, its resource server is made here
  // (its default resource names the port); an error when the resource or an issuer is refused.
  Status SetPort(int port);
  // The JSON-RPC error body of a refusal the connection gate sends itself (408, 413, 431).
  std::string GateRefusalBody(int status) const;

 private:
  // --- before routing, and errors ---
  bool AllowRequest(const httplib::Request& req, httplib::Response& res) const;
  bool HeadReadable(const RequestHeaders& headers, httplib::Response& res) const;
  bool HeadersSingle(const RequestHeaders& headers, httplib::Response& res) const;
  bool RewriteError(httplib::Response& res) const;
  // The bearer token (--auth-token) or OAuth access token of a request to /mcp or /metrics.
  bool Authorized(const RequestHeaders& headers, httplib::Response& res) const;
  // Whose tasks the request this thread serves reaches (the digest of the token or of the OAuth
  // principal), "" without authentication.
  std::string RequestOwner() const;
  // Who makes it (mcp/caller.h): its owner and, with OAuth, its principal, whose sessions it
  // reaches.
  mcp::Caller RequestCaller() const;
  // With OAuth: a message whose method or tool needs a scope the token lacks (403). True: refused.
  bool RefuseForScope(httplib::Response& res, const PostedMessage& posted) const;

  // --- POST ---
  void Post(const httplib::Request& req, httplib::Response& res,
            const httplib::ContentReader& reader);
  bool ReadBody(const RequestHeaders& headers, const httplib::ContentReader& reader,
                httplib::Response& res, std::string* body) const;
  void ServeModern(const McpHeaders& headers, httplib::Response& res, PostedMessage posted,
                   std::shared_ptr<void> busy);
  // A tools/call's Mcp-Param-* headers against the arguments its tool mirrors into them (SEP-2243,
  // request_checks.h CheckParamHeaders); `modern`: an argument without its header is refused too.
  std::optional<mcp::RpcError> CheckArgumentHeaders(const RequestHeaders& headers,
                                                    const PostedMessage& posted, bool modern) const;
  void CancelForHangup(httplib::Response& res, const std::shared_ptr<HttpSession>& request,
                       const mcp::RequestFacts& facts);
  void ServeLegacy(const RequestHeaders& headers, httplib::Response& res, PostedMessage posted,
                   std::shared_ptr<void> busy);
  bool RefuseWhileDraining(httplib::Response& res, const PostedMessage& posted) const;
  std::shared_ptr<HttpSession> OpenSession();
  bool KeepNewSession(httplib::Response& res, const std::shared_ptr<HttpSession>& session);
  void ReplyLegacy(httplib::Response& res, const std::shared_ptr<HttpSession>& session,
                   HttpSession::Answer answer, std::shared_ptr<void> busy);

  // --- GET and DELETE ---
  void Get(const httplib::Request& req, httplib::Response& res);
  void Ready(httplib::Response& res) const;
  void Delete(const httplib::Request& req, httplib::Response& res);

  // --- shared steps ---
  // The session named by Mcp-Session-Id; answers 400 (no header) or 404 (unknown) itself.
  std::shared_ptr<HttpSession> FindSession(const RequestHeaders& headers, httplib::Response& res);
  // Streams `channel` as this response's text/event-stream body.
  // `busy` (DrainState::Busy) is held until the stream ends.
  void Stream(httplib::Response& res, const std::shared_ptr<HttpSession>& session,
              const std::shared_ptr<SseChannel>& channel, bool modern,
              std::shared_ptr<void> busy = {});
  std::string PayloadTooLarge() const;

  mcp::McpServer& server_;
  const HttpOptions& options_;
  OriginPolicy policy_;               // set again by SetPort, before serving; read-only afterwards
  std::unique_ptr<OAuthGate> oauth_;  // with OAuth on: made by SetPort; read-only afterwards
  std::string token_owner_;           // the digest of --auth-token's token, "" without one
  SessionTable<HttpSession>& sessions_;
  LiveAnswers& live_;
  DrainState& drain_;
  // Each tool's Mcp-Param-* headers, read from the input schemas once, at the first tools/call:
  // the tools are all registered before the first connection (mcp/tool_registry.h).
  mutable std::once_flag param_headers_once_;
  mutable std::map<std::string, std::vector<ParamHeader>, std::less<>> param_headers_;
  // Refusals before authentication: anyone can cause them at will, so their lines are rationed.
  mutable log::Throttle refused_origin_log_{"refusals of a Host or Origin"};
  mutable log::Throttle refused_token_log_{"refusals for a missing or wrong bearer token"};
  mutable log::Throttle refused_head_log_{"refusals of a malformed request head"};
};

}  // namespace imgmcp::http
