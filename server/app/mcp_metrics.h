// The protocol core's counts (mcp/core_metrics.h) recorded into the server's Prometheus metrics
// (metrics/metrics.h): the one place the two meet, so neither layer knows the other.
#pragma once

#include <string_view>

#include "mcp/core_metrics.h"
#include "metrics/metrics.h"

namespace imgmcp::app {

class McpMetrics final : public mcp::CoreMetrics {
 public:
  // `metrics` must outlive this.
  explicit McpMetrics(metrics::Metrics& metrics) : metrics_(metrics) {}
  void RecordOperation(std::string_view method, std::string_view tool, std::string_view error_type,
                       double seconds) override {
    metrics_.RecordOperation(method, tool, error_type, seconds);
  }
  void RecordTaskStatus(std::string_view status) override { metrics_.RecordTaskStatus(status); }

 private:
  metrics::Metrics& metrics_;
};

}  // namespace imgmcp::app
