// Progress for one tool call: numbered steps while an edit waits for its turn, and a heartbeat
// while the backend runs, so clients (and their idle timeouts) see that work goes on.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "mcp/tool.h"

namespace imgmcp::tools {

class CallProgress {
 public:
  explicit CallProgress(mcp::ToolCallContext& ctx) : ctx_(ctx) {}
  // Sends "message" as the next step (no-op without a progress token). Thread-safe.
  void Report(const std::string& message);

 private:
  mcp::ToolCallContext& ctx_;
  std::mutex mu_;  // guards step_ so concurrent reports stay strictly increasing
  double step_ = 0;
};

// While alive, reports "<what> (N s)" every `interval` through `progress`. Stops on destruction.
class ProgressHeartbeat {
 public:
  ProgressHeartbeat(CallProgress& progress, std::string what, std::chrono::milliseconds interval);
  ~ProgressHeartbeat();
  ProgressHeartbeat(const ProgressHeartbeat&) = delete;
  ProgressHeartbeat& operator=(const ProgressHeartbeat&) = delete;

 private:
  void Run();

  CallProgress& progress_;
  const std::string what_;
  const std::chrono::milliseconds interval_;
  std::mutex mu_;  // guards stop_
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace imgmcp::tools
