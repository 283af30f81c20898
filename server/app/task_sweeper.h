// TaskSweeper: removes expired task rows while the server runs (docs/design.md §3 "Tasks",
// "Expiry"), and settles the tasks of runners that died, on both stores — not only when a store
// opens; and audit events past --audit-days. One thread sweeps every half --task-ttl, kept between
// kMinPeriod and kMaxPeriod: a periodic wait, which is its point (docs/design.md §5, "Waits"). On
// PostgreSQL the replicas share the work: only the one holding the sweep's advisory lock at that
// moment deletes rows.
#pragma once

#include <chrono>
#include <condition_variable>
#include <stop_token>
#include <thread>

#include "common/thread_annotations.h"
#include "session/session_store.h"

namespace imgmcp::app {

class TaskSweeper {
 public:
  static constexpr std::chrono::seconds kMinPeriod{1};
  static constexpr std::chrono::seconds kMaxPeriod{60};

  // The period for a task ttl: half of it, between kMinPeriod and kMaxPeriod.
  static std::chrono::milliseconds PeriodFor(std::chrono::milliseconds task_ttl);

  // Starts sweeping `store` (which must outlive the sweeper) every PeriodFor(task_ttl); the
  // first sweep comes one period after the start (the store sweeps when it opens).
  // With `audit_days` > 0 each sweep also removes audit events older than that.
  TaskSweeper(session::SessionStore& store, std::chrono::milliseconds task_ttl, int audit_days = 0);
  ~TaskSweeper();  // stops the thread (waits for a sweep in progress)
  TaskSweeper(const TaskSweeper&) = delete;
  TaskSweeper& operator=(const TaskSweeper&) = delete;

 private:
  void Loop(std::stop_token stop);

  session::SessionStore& store_;
  const std::chrono::milliseconds period_;
  const int audit_days_;
  Mutex mu_;                          // guards nothing but the wait itself (stop comes by token)
  std::condition_variable_any wake_;  // woken only by the stop token
  std::jthread thread_;               // last: started once everything above is set
};

}  // namespace imgmcp::app
