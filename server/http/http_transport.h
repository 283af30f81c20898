// The Streamable HTTP transport (DESIGN.md §5, reference doc §4) on cpp-httplib: one endpoint,
// /mcp — POST (JSON-RPC in; JSON or SSE out), GET (a legacy session's standalone SSE stream,
// resumable with Last-Event-ID), DELETE (ends a legacy session) — plus /healthz and the /gallery
// page (gallery_route.h). Both eras (2026-07-28 basic/versioning), chosen per POST: a legacy
// client's Mcp-Session-Id = one mcp::Connection of the shared McpServer; a modern request
// (2026-07-28, no session, headers checked against the body) gets a connection of its own for
// as long as its answer takes, so any replica can serve it. The same core and tools as stdio.
//
// Limits: connections wait for their request head in the connection gate (connection_gate.h),
// with a total deadline and without a thread; each request being answered (a streaming POST, a
// GET stream) holds one of `max_connections` worker threads. Bodies are capped at
// `max_body_bytes` however they are framed. Each session keeps a bounded replay buffer of its
// SSE events.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "server/http/http_listener.h"
#include "server/http/request_checks.h"
#include "server/http/session_table.h"

namespace imgmcp::mcp {
class McpServer;
}  // namespace imgmcp::mcp

namespace imgmcp::http {

class HttpSession;

class HttpTransport final : public HttpListener {
 public:
  HttpTransport(mcp::McpServer& server, HttpOptions options);
  ~HttpTransport() override;  // Stop()
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // Binds host:port and starts serving on background threads. Returns the bound port.
  Result<int> Start() override;
  // Ends every session (cancelling its calls), closes streams and the listener, joins the
  // threads. Idempotent; safe from any thread except an HTTP handler.
  void Stop() override;
  // Blocks until Stop() is called or the listener fails.
  void Wait() override;

  // For tests and probes.
  size_t SessionCount() const { return sessions_.size(); }

 private:
  class Server;  // httplib::Server, kept out of this header

  void InstallRoutes();
  void SweepLoop();
  // Modern requests being answered (each an HttpSession of its own), so Stop() can end them.
  // False once stopping.
  bool RememberModernRequest(const std::shared_ptr<HttpSession>& session);
  void ForgetModernRequest(const std::shared_ptr<HttpSession>& session);
  void EndModernRequests();

  mcp::McpServer& server_;
  const HttpOptions options_;
  const OriginPolicy policy_;
  SystemClock system_clock_;
  SessionTable<HttpSession> sessions_;
  std::unique_ptr<Server> http_;
  std::thread listen_thread_;
  std::thread sweep_thread_;

  std::mutex state_mu_;  // guards started_, stopping_, listener_done_, modern_requests_
  std::condition_variable state_cv_;
  bool started_ = false;
  bool stopping_ = false;
  bool listener_done_ = false;
  std::map<const HttpSession*, std::weak_ptr<HttpSession>> modern_requests_;
};

}  // namespace imgmcp::http
