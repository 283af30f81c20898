// One HTTPS/HTTP POST to Gemini over cpp-httplib, abortable by cancellation or a deadline.
// httplib stays inside http_call.cpp (library imgmcp_gemini_http); nothing here exposes it.
// GeminiClient calls the POST through a PostJsonFunction, so the client logic links no HTTP
// library: tests pass &PostJson, the binary passes the network module's (server/netmod).
#pragma once

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace imgmcp::gemini {

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
};

// One request of any kind (token endpoints, the metadata server): what SendHttp sends.
struct HttpRequest {
  std::string method = "POST";  // "GET" or "POST"
  std::string path;             // with its query, if any
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type;     // POST only
  std::string_view body;        // POST only; the caller keeps it alive during the call
  std::string peer = "Gemini";  // who answers, for error messages ("the token endpoint")
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

// POSTs `body` as application/json with `api_key` in options.auth_header. While the call runs, a
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
