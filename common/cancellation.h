// Cancellation in imgmcp is std::stop_token. The party that may cancel (a transport, on
// notifications/cancelled or a closed stream) owns a std::stop_source; work that can be cancelled
// (a queued edit, a backend call, a wait for a turn) takes the std::stop_token by value.
//
// Waiting is woken, never polled: a wait on a std::condition_variable_any passes the token to
// wait()/wait_until(), which registers a std::stop_callback that wakes it; a wait on anything else
// (a socket, a child thread) registers its own std::stop_callback. No loop sleeps to look at a
// flag.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>

namespace imgmcp {

// Sleeps for `duration` or until `stop` is requested, whichever is first. True when the whole
// duration passed; false as soon as a stop is requested (at once if it already was).
inline bool SleepUnlessStopped(std::chrono::steady_clock::duration duration,
                               const std::stop_token& stop) {
  std::mutex mu;
  std::condition_variable_any woken;
  std::unique_lock lock(mu);
  return !woken.wait_for(lock, stop, duration, [] { return false; }) && !stop.stop_requested();
}

}  // namespace imgmcp
