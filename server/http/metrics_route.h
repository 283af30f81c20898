// GET /metrics: the Prometheus text exposition of metrics/metrics.h. Served on the --http
// listener beside /mcp, and alone on the --metrics listener (HttpOptions::metrics_only). Requests
// to /metrics pass the same Host/Origin allow-list and bearer token as /mcp
// (McpRoutes::AllowRequest, before routing): metric values say how the server is used.
#pragma once

namespace httplib {
class Server;
}  // namespace httplib

namespace imgmcp::metrics {
class Metrics;
}  // namespace imgmcp::metrics

namespace imgmcp::http {

inline constexpr char kMetricsPath[] = "/metrics";

// Serves `metrics` (must outlive the server) at GET kMetricsPath. Does nothing when it is null.
void InstallMetricsRoute(httplib::Server& http, const metrics::Metrics* metrics);

}  // namespace imgmcp::http
