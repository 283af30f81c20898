#include "server/http/http_transport.h"

#include <httplib.h>

#include <algorithm>
#include <exception>
#include <utility>

#include "common/cancellation.h"
#include "common/log.h"
#include "mcp/server.h"
#include "server/http/gated_server.h"
#include "server/http/http_session.h"
#include "server/http/log_tag.h"
#include "server/http/mcp_routes.h"

// ThreadSanitizer suppressions (TSAN builds only) for the uninstrumented system cpp-httplib:
// TSAN cannot see the acquire fast path of its function-local statics (e.g. the chunked-encoding
// terminator), so the first connection thread to initialise one "writes" it and every other one
// that later sends it is reported as a race. The report is confined to bytes httplib itself hands
// to send(); what the routes (mcp_routes.cpp) pass to DataSink::write is a local buffer per call.
#if defined(__SANITIZE_THREAD__)
extern "C" const char* __tsan_default_suppressions() {
  return "race:httplib::detail::send_socket\n";
}
#endif

namespace imgmcp::http {

namespace {

// Where this listener's sessions, streams and gate refusals are counted: the server's metrics,
// except on the --metrics listener, which serves them but has none of its own.
metrics::Metrics* RecordingMetrics(const mcp::McpServer& server, const HttpOptions& options) {
  return options.metrics_only ? nullptr : options.metrics;
}

constexpr auto kStreamsEndWait = std::chrono::milliseconds(1000);
}  // namespace

// httplib::Server behind the connection gate (server/http/gated_server.h).
class HttpTransport::Server final : public GatedServer {};

HttpTransport::HttpTransport(mcp::McpServer& server, HttpOptions options)
    : server_(server),
      options_(std::move(options)),
      sessions_(options_.clock ? *options_.clock : system_clock_, options_.session_idle_timeout,
                options_.max_sessions, RecordingMetrics(server, options_)),
      live_(std::make_unique<LiveAnswers>(RecordingMetrics(server, options_))),
      routes_(std::make_unique<McpRoutes>(server_, options_, sessions_, *live_, drain_)),
      http_(std::make_unique<Server>()) {}

HttpTransport::~HttpTransport() { Stop(); }

Result<int> HttpTransport::Start() {
  {
    MutexLock lock(state_mu_);
    if (started_) return MakeError(ErrorCode::kFailedPrecondition, "already started");
    started_ = true;
  }
  Configure();
  ASSIGN_OR_RETURN(const int port, Bind());
  if (Status routes = routes_->SetPort(port); !routes.ok()) {
    Stop();
    return routes.error();
  }
  listen_thread_ = std::thread([this] { Listen(); });
  {
    // Woken when the listener serves (or has already ended): the caller may hand out the port
    // and stop the transport at once.
    MutexLock lock(state_mu_);
    state_cv_.wait(lock, [this] {
      state_mu_.AssertHeld();
      return listening_ || listener_done_;
    });
  }
  sweep_thread_ = std::jthread([this](std::stop_token stop) { SweepLoop(std::move(stop)); });
  return port;
}

void HttpTransport::Configure() {
  http_->set_payload_max_length(options_.max_body_bytes);
  // SSE answers leave in several small writes; without TCP_NODELAY, Nagle holds each small call
  // for a delayed ACK (~40 ms per call on loopback).
  http_->set_tcp_nodelay(true);
  http_->set_keep_alive_max_count(1000);
  // Short, so Stop() is prompt: an idle keep-alive connection holds its thread this long.
  http_->set_keep_alive_timeout(2);
  http_->set_read_timeout(30, 0);
  http_->set_write_timeout(30, 0);
  routes_->Install(*http_);
}

Result<int> HttpTransport::Bind() {
  std::string bind_host = options_.host;
  if (bind_host.size() > 2 && bind_host.front() == '[' && bind_host.back() == ']') {
    bind_host = bind_host.substr(1, bind_host.size() - 2);
  }
  auto port = http_->Bind(bind_host, options_.port);
  if (port.ok()) return port;
  MutexLock lock(state_mu_);
  listener_done_ = true;
  state_cv_.notify_all();
  return MakeError(ErrorCode::kUnavailable, "cannot listen on " + options_.host + ":" +
                                                std::to_string(options_.port) + ": " +
                                                port.error().message);
}

void HttpTransport::Listen() {
  GateOptions gate;
  gate.header_timeout = options_.header_timeout;
  gate.max_pending = options_.max_pending_connections;
  gate.metrics = RecordingMetrics(server_, options_);
  gate.refusal_body = [this](int status) { return routes_->GateRefusalBody(status); };
  auto serving = [this] {
    MutexLock lock(state_mu_);
    listening_ = true;
    state_cv_.notify_all();
  };
  bool ok = false;
  try {
    ok = http_->Serve(std::move(gate), options_.max_connections, serving);
  } catch (const std::exception& e) {
    log::Error(kLog, std::string("listener failed: ") + e.what());
  }
  MutexLock lock(state_mu_);
  if (!ok && !stopping_) log::Error(kLog, "the HTTP listener stopped unexpectedly");
  listener_done_ = true;
  state_cv_.notify_all();
}

void HttpTransport::Stop() {
  {
    MutexLock lock(state_mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  sweep_thread_.request_stop();  // no session expires while the sessions are being ended
  state_cv_.notify_all();
  AnswerCallsInFlight();
  // Every stream's last frame tells its client how soon to reconnect (sse.h, RetryFrame).
  live_->HintRetry(RetryFrame(options_.sse_retry));
  for (const auto& session : sessions_.TakeAll()) session->End();
  live_->CloseAll();
  // Each stream's thread writes what was queued (the retry hint last) and ends its response
  // cleanly; a client that does not read is not waited for long.
  live_->AwaitStreamsEnded(kStreamsEndWait);
  http_->Shutdown();
  if (listen_thread_.joinable()) listen_thread_.join();
  if (sweep_thread_.joinable()) sweep_thread_.join();
  // Sessions created by requests that raced with the shutdown.
  for (const auto& session : sessions_.TakeAll()) session->End();
}

// Calls still running when the server stops are cancelled and answered with an error that says
// so (nothing of them is committed), on the stream or response they were going to be answered on
// — not left without an answer. Their work stops within moments (a turn or a backend call wakes on
// its stop token); what has not stopped within kStreamsEndWait is left unanswered.
void HttpTransport::AnswerCallsInFlight() {
  const mcp::RpcError stopped = mcp::InternalError(
      "Internal error: the server is shutting down and cancelled this call before it finished; "
      "nothing was committed — send it again");
  std::vector<std::shared_ptr<HttpSession>> holders = live_->Requests();
  for (auto& session : sessions_.All()) holders.push_back(std::move(session));
  for (const auto& holder : holders) holder->connection().CancelAll(stopped);
  const auto deadline = std::chrono::steady_clock::now() + kStreamsEndWait;
  for (const auto& holder : holders) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    holder->connection().WaitIdle(left);
  }
}

void HttpTransport::Wait() {
  MutexLock lock(state_mu_);
  state_cv_.wait(lock, [this] {
    state_mu_.AssertHeld();
    return stopping_ || listener_done_;
  });
}

void HttpTransport::SweepLoop(std::stop_token stop) {
  const auto period = std::clamp<std::chrono::steady_clock::duration>(
      options_.session_idle_timeout / 4, std::chrono::seconds(1), std::chrono::seconds(30));
  while (SleepUnlessStopped(period, stop)) {  // the period, or Stop()
    for (const auto& session : sessions_.TakeExpired()) {
      log::Info(kLog, "session " + session->id().substr(0, 8) + "… expired after idling");
      session->End();
    }
  }
}

}  // namespace imgmcp::http
