#include "server/http/metrics_route.h"

#include <httplib.h>

#include "metrics/metrics.h"

namespace imgmcp::http {

void InstallMetricsRoute(httplib::Server& http, const metrics::Metrics* metrics) {
  if (metrics == nullptr) return;
  http.Get(kMetricsPath, [metrics](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_content(metrics->Render(), metrics::Metrics::kContentType);
  });
}

}  // namespace imgmcp::http
