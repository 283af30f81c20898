#include "server/tools/call_progress.h"

namespace imgmcp::tools {

void CallProgress::Report(const std::string& message) {
  if (!ctx_.HasProgressToken()) return;
  MutexLock lock(mu_);
  step_ += 1;
  ctx_.ReportProgress(step_, std::nullopt, message);
}

ProgressHeartbeat::ProgressHeartbeat(CallProgress& progress, const std::string& what,
                                     std::chrono::milliseconds interval, TimerThread& timers)
    : timer_(timers, interval, [&progress, what, interval](int ticks) {
        const auto secs = std::chrono::duration_cast<std::chrono::seconds>(interval * ticks);
        progress.Report(what + " (" + std::to_string(secs.count()) + " s)");
      }) {
  progress.Report(what);
}

}  // namespace imgmcp::tools
