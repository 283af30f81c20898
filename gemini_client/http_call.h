// One HTTPS/HTTP POST to Gemini over cpp-httplib, abortable by cancellation or a deadline.
// httplib stays inside http_call.cpp (library imgmcp_gemini_http); nothing here exposes it.
// GeminiClient calls the POST through a PostJsonFunction, so the client logic links no HTTP
// library: tests pass &PostJson, the binary passes the network module's (server/netmod).
#pragma once

#include <chrono>
#include <stop_token>
#include <string>
#include <string_view>

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

struct HttpCallOptions {
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds read_timeout{120'000};
  std::string ca_cert_path;  // "" → library default
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

// POSTs `body` as application/json with the key in x-goog-api-key. While the call runs, a watcher
// aborts the connection when `cancel` fires or `deadline` (real steady clock) passes. On failure
// the Error says what went wrong (never the key) and `failure` says why.
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
