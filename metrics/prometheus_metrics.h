// The Metrics (metrics/metrics.h) of a process that serves them: one prometheus-cpp registry
// holding every family, rendered in the text exposition format. Linked into the network module
// (server/netmod/net_module.h), which hands one out to the binary, and into the tests that read
// the exposition.
#pragma once

#include <memory>

#include "metrics/metrics.h"

namespace imgmcp::metrics {

std::unique_ptr<Metrics> NewPrometheusMetrics();

}  // namespace imgmcp::metrics
