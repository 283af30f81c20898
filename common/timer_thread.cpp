#include "common/timer_thread.h"

namespace imgmcp {

TimerThread::TimerThread() = default;

TimerThread::~TimerThread() {
  std::jthread thread;
  {
    MutexLock lock(mu_);
    thread = std::move(thread_);
  }
  // Destroying it requests the stop and joins (nothing when no timer ever started it).
}

TimerThread::Id TimerThread::Schedule(Clock::time_point when, std::function<void()> callback) {
  Id id;
  bool earliest;
  {
    MutexLock lock(mu_);
    if (!thread_.joinable()) {
      // Started by the first timer: a process that never sets one (most stdio sessions' first
      // seconds) does not pay for the thread at start-up.
      thread_ = std::jthread([this](std::stop_token stop) { Loop(stop); });
    }
    id = next_id_++;
    // Two statements: the operands of == are unsequenced, and clang reads begin() first.
    const auto added = timers_.emplace(when, std::make_pair(id, std::move(callback)));
    earliest = added == timers_.begin();
  }
  // Only a new earliest timer changes what the loop waits for; waking it for a later one would
  // cost every call a context switch on the timer's thread.
  if (earliest) changed_.notify_all();
  return id;
}

void TimerThread::Cancel(Id id) {
  MutexLock lock(mu_);
  for (auto it = timers_.begin(); it != timers_.end(); ++it) {
    if (it->second.first == id) {
      timers_.erase(it);
      return;
    }
  }
  changed_.wait(lock, [&] {
    mu_.AssertHeld();
    return running_ != id;
  });
}

void TimerThread::Loop(std::stop_token stop) {
  MutexLock lock(mu_);
  while (!stop.stop_requested()) {
    if (timers_.empty()) {
      changed_.wait(lock, stop, [this] {
        mu_.AssertHeld();
        return !timers_.empty();
      });
      continue;
    }
    const Clock::time_point due = timers_.begin()->first;
    if (Clock::now() < due) {
      // Woken by a new earlier timer, a cancel, or the stop; else at the due time.
      changed_.wait_until(lock, stop, due, [&] {
        mu_.AssertHeld();
        return timers_.empty() || timers_.begin()->first < due;
      });
      continue;
    }
    auto [id, callback] = std::move(timers_.begin()->second);
    timers_.erase(timers_.begin());
    running_ = id;
    lock.unlock();
    callback();
    lock.lock();
    running_ = 0;
    changed_.notify_all();
  }
}

RepeatingTimer::RepeatingTimer(TimerThread& timers, std::chrono::milliseconds interval,
                               std::function<void(int)> tick)
    : timers_(timers),
      interval_(interval),
      tick_(std::move(tick)),
      start_(TimerThread::Clock::now()) {
  MutexLock lock(mu_);
  Arm();
}

RepeatingTimer::~RepeatingTimer() {
  TimerThread::Id id;
  {
    MutexLock lock(mu_);
    stopped_ = true;
    id = id_;
  }
  timers_.Cancel(id);  // a tick running now re-arms nothing once stopped_
}

// mu_ held.
void RepeatingTimer::Arm() {
  const int next = ticks_ + 1;
  id_ = timers_.Schedule(start_ + interval_ * next, [this, next] {
    tick_(next);
    MutexLock lock(mu_);
    ticks_ = next;
    if (!stopped_) Arm();
  });
}

}  // namespace imgmcp
