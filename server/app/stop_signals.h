// SIGTERM and SIGINT, read as events rather than handled: PrepareProcess (serve.h) blocks them in
// every thread before any thread starts, and a StopSignalWatch reads them from a signalfd. Its
// wait is woken by a signal or by a stop request (an eventfd written by a stop callback), so the
// thread that waits is a std::jthread stopped like any other — no signal is sent to wake it.
#pragma once

#include <signal.h>

#include <optional>
#include <stop_token>

#include "common/unique_fd.h"

namespace imgmcp::app {

// The signals that stop the server: SIGINT and SIGTERM.
sigset_t StopSignals();

class StopSignalWatch {
 public:
  StopSignalWatch();
  StopSignalWatch(const StopSignalWatch&) = delete;
  StopSignalWatch& operator=(const StopSignalWatch&) = delete;

  // Waits for the next stop signal and returns its number (consumed); nullopt once `stop` is
  // requested (at once when it already was). One thread waits at a time.
  std::optional<int> Next(std::stop_token stop);

 private:
  const UniqueFd signal_fd_;  // the blocked StopSignals()
  const UniqueFd wake_fd_;    // written when the waiter's stop is requested
};

}  // namespace imgmcp::app
