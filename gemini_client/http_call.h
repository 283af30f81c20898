// One HTTPS/HTTP POST to Gemini over cpp-httplib, abortable by cancellation or a deadline.
// httplib stays inside http_call.cpp (library imgmcp_gemini_http); nothing here exposes it.
// GeminiClient calls the POST through a PostJsonFunction, so the client logic links no HTTP
// library: tests pass &PostJson, the binary passes the network module's (server/netmod).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/timer_thread.h"

namespace imgmcp::gemini {

// The most imgmcp reads of an answer: the one home of these caps (docs/security.md, "Backend
// answers"). SendHttp refuses an answer over its request's cap as soon as the Content-Length
// declares it, or when a chunked body passes it, with kTooLarge (never retried), so neither a
// broken endpoint nor a hostile one can make imgmcp buffer more than this.
//  - A generateContent answer (Gemini or Vertex AI): 96 MiB. A 4K image is 5-30 MB of base64
//    (reference: a 1K PNG ~2 MB, 2K/4K 5-30 MB, "allow >= 64 MB bodies"); 96 MiB holds a
//    64 MiB image (--max-image-bytes' default) in base64 with its text and thought parts.
//  - A Batch API answer (a job, with a finished job's inlined answers): 1 GiB. A job holds at
//    most 100 requests by default (--batch-max), each answered like a generateContent call.
//  - A token endpoint's or the metadata server's answer: 64 KiB (a token answer is about 1 KiB).
//  - An access token: 8 KiB (Google's are at most 2 KiB); a longer one, or one with characters a
//    header cannot carry, is refused and never sent (oauth_sources.cpp).
inline constexpr size_t kMaxGeminiAnswerBytes = size_t{96} << 20;
inline constexpr size_t kMaxBatchAnswerBytes = size_t{1} << 30;
inline constexpr size_t kMaxTokenAnswerBytes = size_t{64} << 10;
inline constexpr size_t kMaxAccessTokenBytes = size_t{8} << 10;

// "96 MiB", "64 KiB", "8 KiB", "100 bytes": a cap as errors and docs state it.
inline std::string FormatByteCap(size_t bytes) {
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0) {
    return std::to_string(bytes >> 20) + " MiB";
  }
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

// A parsed base URL: "https://host[:port][/prefix]".
struct Endpoint {
  std::string scheme_host_port;  // what httplib::Client takes, e.g. "http://127.0.0.1:8080"
  std::string path_prefix;       // "" or "/prefix" (no trailing slash)
  bool https = false;
};

// Accepts http:// and https:// URLs without query, fragment or user info.
Result<Endpoint> ParseBaseUrl(std::string_view base_url);

// An HTTP proxy the request goes through (gemini_client/proxy.h chooses it): plain http://
// targets as absolute-URI requests, https:// targets through an HTTP CONNECT tunnel.
struct ProxyServer {
  std::string host;
  int port = 0;
  std::string username;  // percent-decoded; sent only to the proxy (Proxy-Authorization)
  std::string password;
};

struct HttpCallOptions {
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds read_timeout{120'000};
  std::string ca_cert_path;  // "" → library default
  // Another CA bundle trusted besides ca_cert_path (--ca-file / SSL_CERT_FILE); "" = none.
  std::string extra_ca_file;
  std::optional<ProxyServer> proxy;  // none: connect directly
  // The header PostJson puts its credential in: x-goog-api-key (an API key) or Authorization
  // (the value is then "Bearer <token>").
  std::string auth_header = "x-goog-api-key";
  // Sent as the `traceparent` header when not empty (W3C Trace Context).
  std::string traceparent;
  // Aborts a call at its deadline (a timer, no thread per call); nullptr: only the sockets'
  // timeouts, which are clipped to the deadline, bound it. Must outlive the call.
  TimerThread* timers = nullptr;
};

// One request of any kind (token endpoints, the metadata server): what SendHttp sends.
struct HttpRequest {
  std::string method = "POST";  // "GET" or "POST"
  std::string path;             // with its query, if any
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type;     // POST only
  std::string_view body;        // POST only; the caller keeps it alive during the call
  std::string peer = "Gemini";  // who answers, for error messages ("the token endpoint")
  size_t max_answer_bytes = kMaxTokenAnswerBytes;  // a longer answer is refused (kTooLarge)
};

struct HttpAnswer {
  int status = 0;
  std::string body;
};

// Why a call ended without an answer.
enum class HttpStop {
  kNone,       // a transport error (refused, reset, timeout, TLS): retryable unless `tls` below
  kCancelled,  // `cancel` fired
  kDeadline,   // `deadline` passed
};

struct HttpFailure {
  HttpStop stop = HttpStop::kNone;
  bool tls_verification = false;  // certificate verification failed: not worth retrying
};

// Sends `request` to `endpoint`, abortable like PostJson. Errors never contain header values.
// An answer over request.max_answer_bytes is kTooLarge, naming the cap and the endpoint.
Result<HttpAnswer> SendHttp(const Endpoint& endpoint, const HttpRequest& request,
                            const HttpCallOptions& options, std::stop_token cancel,
                            std::chrono::steady_clock::time_point deadline, HttpFailure* failure);

using SendHttpFunction = Result<HttpAnswer> (*)(
    const Endpoint& endpoint, const HttpRequest& request, const HttpCallOptions& options,
    std::stop_token cancel, std::chrono::steady_clock::time_point deadline, HttpFailure* failure);

// Signs `data` with the PEM private key (RSASSA-PKCS1-v1_5 with SHA-256, JWT's RS256) and returns
// the raw signature. Errors say what is wrong with the key, never its content.
Result<std::string> SignRs256(const std::string& private_key_pem, const std::string& data);
using SignRs256Function = Result<std::string> (*)(const std::string& private_key_pem,
                                                  const std::string& data);

// POSTs `body` as application/json with `api_key` in options.auth_header; reads at most
// kMaxGeminiAnswerBytes of the answer. While the call runs, a
// watcher aborts the connection when `cancel` fires or `deadline` (real steady clock) passes. On
// failure the Error says what went wrong (never the key) and `failure` says why.
Result<HttpAnswer> PostJson(const Endpoint& endpoint, const std::string& path,
                            const std::string& api_key, const std::string& body,
                            const HttpCallOptions& options, std::stop_token cancel,
                            std::chrono::steady_clock::time_point deadline, HttpFailure* failure);

// PostJson or a function with its contract.
using PostJsonFunction = Result<HttpAnswer> (*)(const Endpoint& endpoint, const std::string& path,
                                                const std::string& api_key, const std::string& body,
                                                const HttpCallOptions& options,
                                                std::stop_token cancel,
                                                std::chrono::steady_clock::time_point deadline,
                                                HttpFailure* failure);

}  // namespace imgmcp::gemini
