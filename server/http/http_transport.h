// The Streamable HTTP transport (DESIGN.md §5, reference doc §4) on cpp-httplib: one endpoint,
// /mcp — POST (JSON-RPC in; JSON or SSE out), GET (the session's standalone SSE stream, resumable
// with Last-Event-ID), DELETE (ends the session) — plus /healthz. One Mcp-Session-Id = one
// mcp::Connection of the shared McpServer: the same core and tools as stdio.
//
// Limits: every open HTTP connection (a streaming POST, a GET stream, an idle keep-alive
// connection) holds one of `max_connections` threads; further connections wait in the accept
// queue until one frees up. Each session keeps a bounded replay buffer of its SSE events.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "server/http/request_checks.h"
#include "server/http/session_table.h"

namespace imgmcp::mcp {
class McpServer;
}  // namespace imgmcp::mcp

namespace imgmcp::http {

class HttpSession;

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 0;            // 0 = OS-chosen
  std::string auth_token;  // empty = no auth; else "Authorization: Bearer <token>" is required
  size_t max_body_bytes = size_t{96} << 20;  // larger POST bodies get 413
  std::chrono::seconds session_idle_timeout{1800};
  // Host names accepted in Host/Origin besides localhost, 127.0.0.1 and [::1] (any port). The
  // bind host is added automatically unless it is a wildcard (0.0.0.0, ::).
  std::vector<std::string> extra_allowed_hosts;
  size_t max_connections = 128;               // HTTP worker threads = concurrently open connections
  size_t max_sessions = 4096;                 // initialize beyond it gets 503
  std::chrono::milliseconds sse_retry{1000};  // `retry:` of priming events
  std::chrono::seconds sse_keepalive{15};     // comment frame on idle streams
  size_t replay_max_events = 1024;            // per session
  size_t replay_max_bytes = size_t{16} << 20;  // per session
  const Clock* clock = nullptr;                // session expiry clock; nullptr = system
};

class HttpTransport {
 public:
  HttpTransport(mcp::McpServer& server, HttpOptions options);
  ~HttpTransport();  // Stop()
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // Binds host:port and starts serving on background threads. Returns the bound port.
  Result<int> Start();
  // Ends every session (cancelling its calls), closes streams and the listener, joins the
  // threads. Idempotent; safe from any thread except an HTTP handler.
  void Stop();
  // Blocks until Stop() is called or the listener fails.
  void Wait();

  // For tests and probes.
  size_t SessionCount() const { return sessions_.size(); }

 private:
  class Server;  // httplib::Server, kept out of this header

  void InstallRoutes();
  void SweepLoop();

  mcp::McpServer& server_;
  const HttpOptions options_;
  const OriginPolicy policy_;
  SystemClock system_clock_;
  SessionTable<HttpSession> sessions_;
  std::unique_ptr<Server> http_;
  std::thread listen_thread_;
  std::thread sweep_thread_;

  std::mutex state_mu_;  // guards started_, stopping_, listener_done_
  std::condition_variable state_cv_;
  bool started_ = false;
  bool stopping_ = false;
  bool listener_done_ = false;
};

}  // namespace imgmcp::http
