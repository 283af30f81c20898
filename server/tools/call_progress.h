// Progress for one tool call: numbered steps while an edit waits for its turn, and a heartbeat
// while the backend runs, so clients (and their idle timeouts) see that work goes on.
#pragma once

#include <chrono>
#include <string>

#include "common/thread_annotations.h"
#include "common/timer_thread.h"
#include "mcp/tool.h"

namespace imgmcp::tools {

class CallProgress {
 public:
  explicit CallProgress(mcp::ToolCallContext& ctx) : ctx_(ctx) {}
  // Sends "message" as the next step (no-op without a progress token). Thread-safe.
  void Report(const std::string& message);

 private:
  mcp::ToolCallContext& ctx_;
  Mutex mu_;  // guards step_ so concurrent reports stay strictly increasing
  double step_ GUARDED_BY(mu_) = 0;
};

// While alive, reports "<what> (N s)" every `interval` through `progress`, on `timers`' thread
// (no thread per call). Stops on destruction (waiting for a report in progress).
class ProgressHeartbeat {
 public:
  ProgressHeartbeat(CallProgress& progress, const std::string& what,
                    std::chrono::milliseconds interval, TimerThread& timers);

 private:
  RepeatingTimer timer_;
};

}  // namespace imgmcp::tools
