// Metrics: imgmcp's Prometheus metrics in one place — one registry, one typed family per metric,
// and the text exposition GET /metrics serves (server/http/mcp_routes.cpp, and the --metrics
// listener). Built on prometheus-cpp's core; no prometheus-cpp type appears in this header, so the
// layers that record (mcp through its own interface, gemini_client, session, server/http) see only
// these methods.
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

class Metrics {
 public:
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // --- MCP (mcp/) ---
  // One request answered: `method` from the method table, `tool` the registered tool of a
  // tools/call ("" otherwise), `error_type` "" on success, kToolError for an isError result, else
  // the JSON-RPC error code ("-32602").
  void RecordOperation(std::string_view method, std::string_view tool, std::string_view error_type,
                       double seconds);

  // --- backends (gemini_client) ---
  // One Generate/Edit through the backend, all attempts included: `outcome` "ok" or the error
  // code's name ("unavailable", "deadline_exceeded", …).
  void RecordBackendCall(std::string_view backend, std::string_view outcome, double seconds);
  // One more attempt after a failed one, by cause (kRetry*).
  void RecordBackendRetry(std::string_view backend, std::string_view cause);

  // --- sessions (session/) ---
  // How long an edit waited for its session's turn.
  void RecordTurnWait(double seconds);
  // A commit of `versions` new versions holding `bytes` of image data.
  void RecordCommit(int64_t versions, int64_t bytes);
  // A read of a version's image bytes looked in this process's image cache (session/image_cache.h):
  // `hit` — they were there — or a miss (read from the store). Per replica: behind a load
  // balancer that keeps a session on one replica, its reads hit.
  void RecordImageCacheLookup(bool hit);
  // The store's connection pool (PostgreSQL): connections lent out, and callers waiting for one.
  void SetStorePool(int64_t in_use, int64_t waiting);

  // --- tasks (mcp/task_runner.h) ---
  // A task this process created or ran reached `status` (working when created, then
  // input_required, completed, failed or cancelled).
  void RecordTaskStatus(std::string_view status);

  // --- cost (server/tools/image_tools.cpp; README.md, "What it costs") ---
  // A call charged `usd` on `model` (the model whose prices were used), with its tokens by kind.
  void RecordSpend(std::string_view model, double usd, int64_t input_tokens,
                   int64_t output_image_tokens, int64_t output_text_tokens,
                   int64_t thoughts_tokens);
  // A call refused before any request by `budget`: "per_day", "per_session" or "max_cost".
  void RecordBudgetRefusal(std::string_view budget);

  // --- HTTP (server/http) ---
  void SetOpenHttpSessions(int64_t count);  // legacy Mcp-Session-Id sessions
  void SetOpenSseStreams(int64_t count);    // text/event-stream answers being written
  // A connection the gate refused or closed before a worker saw it: 408 (head too slow), 413,
  // 431, or "overflow" (too many waiting; the longest waiting closed).
  void RecordGateRejection(std::string_view reason);

  // The text exposition (Content-Type kContentType) of every metric.
  std::string Render() const;
  static constexpr char kContentType[] = "text/plain; version=0.0.4; charset=utf-8";

 private:
  struct Families;
  std::unique_ptr<Families> families_;
};

}  // namespace imgmcp::metrics
