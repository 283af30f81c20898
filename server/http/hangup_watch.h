// A condition that also ends its wait when the client at the other end of a socket hangs up. A
// 2026-07-28 request is cancelled by its client closing the connection (basic/patterns/
// cancellation), and a closed connection is otherwise noticed only at the next write — the SSE
// keep-alive, seconds later — while the request may sit in a session's line or in a backend call.
// So the thread that waits for a modern request's answer waits on both: poll() on the socket
// (POLLRDHUP: the client closed its end) beside an eventfd that NotifyAll() writes. Woken either
// way, never polled on a timer. Without a socket it is a plain condition variable.
//
// The owner's mutex guards the condition; NotifyAll() may be called with or without it held, after
// the condition may have changed. Linux (poll with POLLRDHUP, eventfd).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <optional>

#include "common/thread_annotations.h"
#include "common/unique_fd.h"

namespace imgmcp::http {

class HangupAwareCondition {
 public:
  enum class Wake { kReady, kTimeout, kHangup };
  using Deadline = std::optional<std::chrono::steady_clock::time_point>;

  // `socket`: the client connection to watch; -1 for none.
  explicit HangupAwareCondition(int socket = -1) : socket_(socket) {}
  HangupAwareCondition(const HangupAwareCondition&) = delete;
  HangupAwareCondition& operator=(const HangupAwareCondition&) = delete;

  void NotifyAll();

  // Waits, `mu` (the owner's mutex, held by the caller's MutexLock) held on entry and on return,
  // until `ready()` holds (kReady), the deadline passes (kTimeout) or the client hangs up (kHangup,
  // unless `ready()` holds too). Released and taken again on `mu` itself, so the caller's lock
  // stays balanced.
  template <typename Predicate>
  Wake Wait(Mutex& mu, Deadline deadline, Predicate ready) REQUIRES(mu) {
    if (socket_ < 0 || !WatchReady()) {
      if (!deadline) {
        cv_.wait(mu, ready);
        return Wake::kReady;
      }
      return cv_.wait_until(mu, *deadline, ready) ? Wake::kReady : Wake::kTimeout;
    }
    while (!ready()) {
      const int timeout_ms = TimeoutMs(deadline);
      if (timeout_ms == 0) return Wake::kTimeout;
      mu.unlock();
      const bool hung_up = PollOnce(timeout_ms);
      mu.lock();
      if (hung_up) return ready() ? Wake::kReady : Wake::kHangup;
    }
    return Wake::kReady;
  }

 private:
  // Creates the eventfd on first use (only requests that wait pay for it); false when it cannot
  // be had, and the wait falls back to the condition variable alone.
  bool WatchReady();
  // Milliseconds to the deadline, rounded up; -1 without one, 0 once it passed.
  static int TimeoutMs(Deadline deadline);
  // One poll() of the socket and the eventfd; true when the client hung up.
  bool PollOnce(int timeout_ms);

  const int socket_;
  UniqueFd wake_;                 // the eventfd; set by the waiter, under the owner's mutex
  std::atomic<int> wake_fd_{-1};  // wake_.get() once set: read by all
  std::condition_variable_any cv_;
};

}  // namespace imgmcp::http
