// Limits on starting a tools/call now, per caller (docs/design.md, "Per-person limits"): the
// server's to decide (a rate and a number of calls in flight per person, say). The core asks
// before it admits a call and holds the permit until the call is over: its answer, or the end of
// the task it became. A refused call is answered with TooManyRequests (json_rpc.h), which an HTTP
// transport sends as 429 with Retry-After.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "mcp/caller.h"

namespace imgmcp::mcp {

struct CallRefusal {
  std::string limit;    // the setting that refused, e.g. "--rate-limit-per-user"
  std::string message;  // what the client reads: which limit, and when to try again
  int retry_after_seconds = 1;
};

struct CallPermit {
  std::shared_ptr<void> held;  // kept while the call runs (may be null)
  std::optional<CallRefusal> refusal;
};

class CallLimiter {
 public:
  virtual ~CallLimiter() = default;
  // Thread-safe; called on a transport's reading thread, so it must not wait long.
  virtual CallPermit Admit(const Caller& caller, const std::string& tool) = 0;
};

}  // namespace imgmcp::mcp
