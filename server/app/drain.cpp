#include "server/app/drain.h"

#include <string.h>

#include <algorithm>
#include <ctime>
#include <string>

#include "common/log.h"

namespace imgmcp::app {
namespace {

using Clock = std::chrono::steady_clock;
constexpr char kLog[] = "drain";
constexpr auto kStep = std::chrono::milliseconds(100);

std::string Seconds(Clock::duration d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + " s";
}

std::string SignalName(int signal_number) {
  const char* name = sigabbrev_np(signal_number);
  return name != nullptr ? std::string("SIG") + name : "signal " + std::to_string(signal_number);
}

// Waits up to kStep (never past `deadline`) for one of `signals`; true when one came.
bool SignalWithin(const sigset_t& signals, Clock::time_point deadline) {
  const auto left = std::min<Clock::duration>(kStep, deadline - Clock::now());
  if (left <= Clock::duration::zero()) return false;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
  const timespec wait{static_cast<time_t>(ns / 1'000'000'000),
                      static_cast<long>(ns % 1'000'000'000)};
  const int got = sigtimedwait(&signals, nullptr, &wait);
  if (got < 0) return false;  // timed out, or EINTR
  log::Info(kLog, SignalName(got) + " again: stopping now");
  return true;
}

// Step 1: serves on until no request besides health checks came for kQuietWindow. False: the
// deadline passed or a signal came first.
bool AwaitQuiet(http::HttpListener& listener, const sigset_t& signals, Clock::time_point start,
                Clock::time_point deadline) {
  if (!listener.Activity().ready_probed) {
    log::Info(kLog, "nothing ever asked /readyz (no load balancer watches it): no notice window");
    return Clock::now() < deadline;
  }
  const Clock::time_point notice_ends =
      std::min(start + kMaxNoticeWindow, start + (deadline - start) / 2);
  while (Clock::now() < deadline) {
    if (Clock::now() >= notice_ends) {
      log::Info(kLog, "requests still coming after " + Seconds(Clock::now() - start) +
                          ": the notice window ends");
      return true;
    }
    const Clock::time_point since = std::max(listener.Activity().last_request, start);
    if (Clock::now() - since >= kQuietWindow) {
      log::Info(kLog, "no new requests for " + Seconds(kQuietWindow));
      return true;
    }
    if (SignalWithin(signals, deadline)) return false;
  }
  return false;
}

// Step 2: waits for the POSTs being answered and the tasks running. False: the deadline passed or
// a signal came first.
bool AwaitIdle(http::HttpListener& listener, mcp::TaskRunner& tasks, const sigset_t& signals,
               Clock::time_point deadline) {
  while (listener.Activity().busy > 0 || tasks.Running() > 0) {
    if (Clock::now() >= deadline || SignalWithin(signals, deadline)) return false;
  }
  return true;
}

}  // namespace

void Drain(http::HttpListener& listener, mcp::TaskRunner& tasks, std::chrono::seconds timeout,
           int first_signal, const sigset_t& signals) {
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + timeout;
  listener.BeginDrain();
  const std::string quiet = Seconds(kQuietWindow);
  const std::string limit = std::to_string(timeout.count()) + " s";
  log::Info(kLog, SignalName(first_signal) +
                      ": draining; /readyz answers 503; requests are served" +
                      " until none came for " + quiet + " (drain timeout " + limit + ")");
  const bool on_time = AwaitQuiet(listener, signals, start, deadline);
  listener.RefuseNewCalls();
  if (on_time) {
    log::Info(kLog, "refusing new calls; " + std::to_string(listener.Activity().busy) +
                        " request(s) and " + std::to_string(tasks.Running()) +
                        " task(s) in flight may finish");
    AwaitIdle(listener, tasks, signals, deadline);
  }
  const size_t left = listener.Activity().busy;
  const size_t tasks_left = tasks.Running();
  if (left > 0 || tasks_left > 0) {
    log::Warn(kLog, "cancelling " + std::to_string(left) + " request(s) and " +
                        std::to_string(tasks_left) + " task(s) still in flight after " +
                        Seconds(Clock::now() - start) + "; nothing of them is committed");
  } else {
    log::Info(kLog, "nothing in flight after " + Seconds(Clock::now() - start));
  }
  log::Info(kLog, "closing streams (with a retry hint) and the listener");
}

}  // namespace imgmcp::app
