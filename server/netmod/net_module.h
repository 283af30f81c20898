// The network module: the parts of imgmcp that need cpp-httplib — the POST to Gemini
// (gemini_client/http_call.cpp) and the Streamable HTTP transport (server/http, but for parsing
// --http) — and the metrics only HTTP serves (metrics/prometheus_metrics.h, on prometheus-cpp),
// built as a shared module, lib/imgmcp/libimgmcp_net.so beside bin/imgmcp. Debian's
// cpp-httplib is a shared library that loads OpenSSL and initialises it (error strings, config,
// providers) as soon as it is mapped: about 3 MB of a process's memory, 4.8 MB with the libraries.
// The binary does not link it; it loads the module the first time it talks HTTP (the first
// Gemini call, or --http at start-up). A stdio server that has not called Gemini yet, or uses the
// local backend, never maps TLS.
//
// The module holds only that code; everything it uses of the rest of imgmcp (protocol core,
// logging, results) is the binary's own, which the binary exports for it
// (server/netmod/exported_symbols.list), so there is one copy of every function and global.
#pragma once

#include <memory>

#include "gemini_client/http_call.h"
#include "metrics/metrics.h"
#include "server/http/http_listener.h"

namespace imgmcp::mcp {
class McpServer;
}  // namespace imgmcp::mcp

namespace imgmcp::netmod {

// What the module exports, through one C function (kEntryPoint).
struct NetModuleApi {
  const char* build_tag;  // kBuildTag of the build that made the module
  gemini::PostJsonFunction post_json;
  gemini::SendHttpFunction send_http;    // token endpoints, the metadata server
  gemini::SignRs256Function sign_rs256;  // service-account JWTs (OpenSSL)
  std::unique_ptr<http::HttpListener> (*new_http_listener)(mcp::McpServer& server,
                                                           http::HttpOptions options);
  std::unique_ptr<metrics::Metrics> (*new_metrics)();  // metrics/prometheus_metrics.h
};

inline constexpr char kEntryPoint[] = "imgmcp_net_module_api";
// Binary and module must come from the same build: the struct above and the types it passes
// have no stable ABI. The tag names the version, the compiler and this interface's revision.
inline constexpr char kBuildTag[] = "imgmcp " IMGMCP_VERSION " / " __VERSION__ " / net-module 5";

}  // namespace imgmcp::netmod
