// The network module's one exported function (see net_module.h).
#include <memory>
#include <utility>

#include "gemini_client/http_call.h"
#include "metrics/prometheus_metrics.h"
#include "server/http/http_transport.h"
#include "server/netmod/net_module.h"

namespace imgmcp::netmod {
namespace {

std::unique_ptr<http::HttpListener> NewHttpListener(mcp::McpServer& server,
                                                    http::HttpOptions options) {
  return std::make_unique<http::HttpTransport>(server, std::move(options));
}

}  // namespace
}  // namespace imgmcp::netmod

extern "C" __attribute__((visibility("default"))) const imgmcp::netmod::NetModuleApi*
imgmcp_net_module_api() {
  static const imgmcp::netmod::NetModuleApi api{
      imgmcp::netmod::kBuildTag,        &imgmcp::gemini::PostJson,
      &imgmcp::gemini::SendHttp,        &imgmcp::gemini::SignRs256,
      &imgmcp::netmod::NewHttpListener, &imgmcp::metrics::NewPrometheusMetrics};
  return &api;
}
