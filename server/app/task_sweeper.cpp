#include "server/app/task_sweeper.h"

#include <algorithm>
#include <string>

#include "common/clock.h"
#include "common/log.h"

namespace imgmcp::app {

std::chrono::milliseconds TaskSweeper::PeriodFor(std::chrono::milliseconds task_ttl) {
  return std::clamp<std::chrono::milliseconds>(task_ttl / 2, kMinPeriod, kMaxPeriod);
}

TaskSweeper::TaskSweeper(session::SessionStore& store, std::chrono::milliseconds task_ttl,
                         int audit_days)
    : store_(store),
      period_(PeriodFor(task_ttl)),
      audit_days_(audit_days),
      thread_([this](std::stop_token stop) { Loop(stop); }) {}

TaskSweeper::~TaskSweeper() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

void TaskSweeper::Loop(std::stop_token stop) {
  while (true) {
    {
      MutexLock lock(mu_);
      wake_.wait_for(lock, stop, period_, [] { return false; });
    }
    if (stop.stop_requested()) return;
    Result<int64_t> swept = store_.SweepTasks();
    if (!swept.ok() && swept.error().code != ErrorCode::kUnsupported) {
      log::Warn("tasks", "sweeping expired tasks failed (tried again in " +
                             std::to_string(period_.count() / 1000) +
                             " s): " + swept.error().message);
    }
    if (audit_days_ > 0) {
      constexpr int64_t kDayMs = 86'400'000;
      Result<int64_t> forgotten = store_.ForgetAudit(WallMs(SystemClock()) - audit_days_ * kDayMs);
      if (!forgotten.ok() && forgotten.error().code != ErrorCode::kUnsupported) {
        log::Warn("audit", "removing old audit events failed: " + forgotten.error().message);
      }
    }
  }
}

}  // namespace imgmcp::app
