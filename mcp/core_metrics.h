// What the protocol core counts: how long each answered request took (and how it ended), and each
// status a task reaches. An interface, so the core depends on no metrics library (docs/design.md
// §1); the server plugs its Prometheus metrics (metrics/metrics.h) in at wiring
// (server/app/mcp_metrics.h). Implementations are thread-safe: the core records from any thread.
#pragma once

#include <string_view>

namespace imgmcp::mcp {

// The error_type of a tools/call answered with an isError result.
inline constexpr std::string_view kToolErrorType = "tool_error";

class CoreMetrics {
 public:
  virtual ~CoreMetrics() = default;
  // A request answered after `seconds`: its method, the tool of a tools/call ("" otherwise),
  // `error_type` "" on success, kToolErrorType for an isError result, else the JSON-RPC code.
  virtual void RecordOperation(std::string_view method, std::string_view tool,
                               std::string_view error_type, double seconds) = 0;
  // A task reached `status` ("working" when created, "input_required", "completed", …).
  virtual void RecordTaskStatus(std::string_view status) = 0;
};

}  // namespace imgmcp::mcp
