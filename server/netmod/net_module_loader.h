// Finds and loads the network module (net_module.h) for the binary: once per process, on first
// use, from <directory of the running binary>/../lib/imgmcp/libimgmcp_net.so. Links no HTTP
// library.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <stop_token>
#include <string>

#include "common/result.h"
#include "gemini_client/http_call.h"
#include "metrics/metrics.h"
#include "server/netmod/net_module.h"

namespace imgmcp::netmod {

// Where this binary expects its network module.
std::filesystem::path NetModulePath();

// A quick start-up check (one stat, no loading): the module file is there. The error names the
// path and how to restore it.
Status CheckNetModuleInstalled();

// Loads the module the first time (thread-safe; later calls return the first outcome). Errors
// (kFailedPrecondition) name the path and say why: missing, not loadable (dlerror), or from
// another build.
Result<const NetModuleApi*> LoadNetModule();

// A gemini::PostJsonFunction: loads the module on first use, then forwards to its PostJson.
// When the module cannot be loaded the error is not retryable (kFailedPrecondition).
Result<gemini::HttpAnswer> PostJsonViaNetModule(
    const gemini::Endpoint& endpoint, const std::string& path, const std::string& api_key,
    const std::string& body, const gemini::HttpCallOptions& options, std::stop_token cancel,
    std::chrono::steady_clock::time_point deadline, gemini::HttpFailure* failure);

// A gemini::SendHttpFunction and a gemini::SignRs256Function through the module, likewise.
Result<gemini::HttpAnswer> SendHttpViaNetModule(const gemini::Endpoint& endpoint,
                                                const gemini::HttpRequest& request,
                                                const gemini::HttpCallOptions& options,
                                                std::stop_token cancel,
                                                std::chrono::steady_clock::time_point deadline,
                                                gemini::HttpFailure* failure);
Result<std::string> SignRs256ViaNetModule(const std::string& private_key_pem,
                                          const std::string& data);

// The metrics a server over HTTP records and serves (the module holds their prometheus-cpp
// implementation): loads the module first, as the HTTP server it serves them on needs it anyway.
Result<std::unique_ptr<metrics::Metrics>> NewMetricsViaNetModule();

}  // namespace imgmcp::netmod
