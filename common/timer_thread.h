// TimerThread: one thread that runs callbacks at given times, for every call's timers (progress
// heartbeats, the deadline of a backend call), instead of a thread per call (docs/design.md §5).
// The owner (server/app's WiredServer) passes it to what needs it; there is no global one.
//
// Callbacks run on the timer's thread, one at a time, in deadline order: they must be quick (a
// progress notification, aborting a socket) and must not call Cancel on their own timer. Cancel
// returns once the callback is not running and will not run, so the state it uses may go.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <stop_token>
#include <thread>
#include <utility>

#include "common/thread_annotations.h"

namespace imgmcp {

class TimerThread {
 public:
  using Clock = std::chrono::steady_clock;
  using Id = uint64_t;  // 0 is never an id

  TimerThread();
  ~TimerThread();  // runs nothing more; waits for a callback running now
  TimerThread(const TimerThread&) = delete;
  TimerThread& operator=(const TimerThread&) = delete;

  // Runs `callback` at `when` (at once if that has passed). Thread-safe.
  Id Schedule(Clock::time_point when, std::function<void()> callback);
  // Makes sure the timer does not run (if it has not yet) and is not running (waits if it is).
  // Thread-safe; not from a callback of this timer.
  void Cancel(Id id);

 private:
  void Loop(std::stop_token stop);

  Mutex mu_;                             // guards timers_, next_id_, running_, thread_
  std::condition_variable_any changed_;  // a timer added or cancelled, or a callback finished
  std::multimap<Clock::time_point, std::pair<Id, std::function<void()>>> timers_ GUARDED_BY(mu_);
  Id next_id_ GUARDED_BY(mu_) = 1;
  Id running_ GUARDED_BY(mu_) = 0;       // the id whose callback runs now, 0 when none
  std::jthread thread_ GUARDED_BY(mu_);  // started by the first Schedule
};

// A timer that repeats every `interval` from now until it is destroyed: `tick` gets how many
// intervals have passed (1, 2, …). Destroying it waits for a tick in progress.
class RepeatingTimer {
 public:
  RepeatingTimer(TimerThread& timers, std::chrono::milliseconds interval,
                 std::function<void(int)> tick);
  ~RepeatingTimer();
  RepeatingTimer(const RepeatingTimer&) = delete;
  RepeatingTimer& operator=(const RepeatingTimer&) = delete;

 private:
  void Arm() REQUIRES(mu_);

  TimerThread& timers_;
  const std::chrono::milliseconds interval_;
  const std::function<void(int)> tick_;
  const TimerThread::Clock::time_point start_;
  Mutex mu_;  // guards id_, ticks_, stopped_
  TimerThread::Id id_ GUARDED_BY(mu_) = 0;
  int ticks_ GUARDED_BY(mu_) = 0;
  bool stopped_ GUARDED_BY(mu_) = false;
};

}  // namespace imgmcp
