// Metrics: imgmcp's Prometheus metrics in one place — one typed family per metric, and the text
// exposition GET /metrics serves (server/http/mcp_routes.cpp, and the --metrics listener). This
// header is the interface the layers that record see (mcp through its own interface,
// gemini_client, session, server/http); the implementation, on prometheus-cpp's core, is
// metrics/prometheus_metrics.h. Metrics are served only over HTTP, so that implementation is built
// into the network module (server/netmod/net_module.h) with the HTTP server: a stdio server never
// maps prometheus-cpp.
//
// A layer receives a `Metrics*` when it is wired (server/app/wired_server.cpp); nullptr means
// metrics are off (stdio without --metrics), and every hook is then one pointer test.
//
// Names follow the OpenTelemetry MCP semantic conventions where they exist
// (mcp_server_operation_duration_seconds with mcp_method_name, gen_ai_tool_name, error_type);
// the rest are imgmcp_*. Every label value comes from a bounded vocabulary (method and tool names
// of the tables, error codes, causes); as a second guard each family keeps at most
// kMaxSeriesPerFamily label sets and counts anything beyond under the value "other". No label
// carries a session id, a prompt, a key or a token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace imgmcp::metrics {

inline constexpr size_t kMaxSeriesPerFamily = 256;

// error_type of a tools/call whose result has isError: true (OpenTelemetry's value).
inline constexpr std::string_view kToolError = "tool_error";

// Why a backend call was retried (imgmcp_backend_retries_total's cause label).
inline constexpr std::string_view kRetryRateLimited = "429";
inline constexpr std::string_view kRetryServerError = "5xx";
inline constexpr std::string_view kRetryTimeout = "timeout";           // 408, or no answer in time
inline constexpr std::string_view kRetryTransport = "transport";       // no answer (connection)
inline constexpr std::string_view kRetryUnusable = "unusable_answer";  // 200 without an image

// Thread-safe: every method may be called from any thread.
class Metrics {
 public:
  virtual ~Metrics() = default;

  // --- MCP (mcp/) ---
  // One request answered: `method` from the method table, `tool` the registered tool of a
  // tools/call ("" otherwise), `error_type` "" on success, kToolError for an isError result, else
  // the JSON-RPC error code ("-32602").
  virtual void RecordOperation(std::string_view method, std::string_view tool,
                               std::string_view error_type, double seconds) = 0;

  // --- backends (gemini_client) ---
  // One Generate/Edit through the backend, all attempts included: `outcome` "ok" or the error
  // code's name ("unavailable", "deadline_exceeded", …).
  virtual void RecordBackendCall(std::string_view backend, std::string_view outcome,
                                 double seconds) = 0;
  // One more attempt after a failed one, by cause (kRetry*).
  virtual void RecordBackendRetry(std::string_view backend, std::string_view cause) = 0;

  // --- sessions (session/) ---
  // How long an edit waited for its session's turn.
  virtual void RecordTurnWait(double seconds) = 0;
  // A commit of `versions` new versions holding `bytes` of image data.
  virtual void RecordCommit(int64_t versions, int64_t bytes) = 0;
  // A read of a version's image bytes looked in this process's image cache (session/image_cache.h):
  // `hit` — they were there — or a miss (read from the store). Per replica: behind a load
  // balancer that keeps a session on one replica, its reads hit.
  virtual void RecordImageCacheLookup(bool hit) = 0;
  // The store's connection pool (PostgreSQL): connections lent out, and callers waiting for one.
  virtual void SetStorePool(int64_t in_use, int64_t waiting) = 0;

  // --- tasks (mcp/task_runner.h) ---
  // A task this process created or ran reached `status` (working when created, then
  // input_required, completed, failed or cancelled).
  virtual void RecordTaskStatus(std::string_view status) = 0;

  // --- cost (server/tools/image_tools.cpp; README.md, "What it costs") ---
  // A call charged `usd` on `model` (the model whose prices were used), with its tokens by kind.
  virtual void RecordSpend(std::string_view model, double usd, int64_t input_tokens,
                           int64_t output_image_tokens, int64_t output_text_tokens,
                           int64_t thoughts_tokens) = 0;
  // A call refused before any request by `budget`: "per_day", "per_user_day", "per_session" or
  // "max_cost".
  virtual void RecordBudgetRefusal(std::string_view budget) = 0;

  // --- HTTP (server/http) ---
  virtual void SetOpenHttpSessions(int64_t count) = 0;  // legacy Mcp-Session-Id sessions
  virtual void SetOpenSseStreams(int64_t count) = 0;    // text/event-stream answers being written
  // A connection the gate refused or closed before a worker saw it: 408 (head too slow), 413,
  // 431, or "overflow" (too many waiting; the longest waiting closed).
  virtual void RecordGateRejection(std::string_view reason) = 0;

  // The text exposition (Content-Type kContentType) of every metric.
  virtual std::string Render() const = 0;
  static constexpr char kContentType[] = "text/plain; version=0.0.4; charset=utf-8";

 protected:
  Metrics() = default;
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;
};

}  // namespace imgmcp::metrics
