// The Streamable HTTP transport (`--http`) on cpp-httplib: the listener, its threads and its
// lifecycle. What each request gets — /mcp (POST, GET, DELETE) in both protocol eras, /healthz,
// /readyz, /gallery — is in mcp_routes.h. A drain (server/app/drain.h) goes through DrainState. The
// same core and tools as stdio.
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
#include <memory>
#include <stop_token>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/result.h"
#include "common/thread_annotations.h"
#include "server/http/drain_state.h"
#include "server/http/http_listener.h"
#include "server/http/session_table.h"

namespace imgmcp::mcp {
class McpServer;
}  // namespace imgmcp::mcp

namespace imgmcp::http {

class HttpSession;
class LiveAnswers;
class McpRoutes;

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
  void BeginDrain() override { drain_.BeginDrain(); }
  void RefuseNewCalls() override { drain_.RefuseNewCalls(); }
  DrainActivity Activity() const override {
    return {drain_.last_request(), drain_.busy(), drain_.ready_probed(), drain_.idle_fd()};
  }

  // For tests and probes.
  size_t SessionCount() const { return sessions_.size(); }

 private:
  class Server;  // httplib::Server, kept out of this header

  void Configure();
  // Binds host:port; on failure the listener counts as done (Wait() returns).
  Result<int> Bind();
  // The listener, on listen_thread_: serves until Stop() or a failure.
  void Listen();
  void SweepLoop(std::stop_token stop);
  void AnswerCallsInFlight();

  mcp::McpServer& server_;
  const HttpOptions options_;
  SystemClock system_clock_;
  SessionTable<HttpSession> sessions_;
  DrainState drain_;
  std::unique_ptr<LiveAnswers> live_;  // modern requests and streams, for Stop()
  std::unique_ptr<McpRoutes> routes_;
  std::unique_ptr<Server> http_;
  std::thread listen_thread_;
  std::jthread sweep_thread_;  // ends legacy sessions idle too long, until Stop()

  Mutex state_mu_;  // guards started_, stopping_, listening_, listener_done_
  std::condition_variable_any state_cv_;
  bool started_ GUARDED_BY(state_mu_) = false;
  bool stopping_ GUARDED_BY(state_mu_) = false;
  bool listening_ GUARDED_BY(state_mu_) = false;  // the listener serves (it may have ended since)
  bool listener_done_ GUARDED_BY(state_mu_) = false;
};

}  // namespace imgmcp::http
