#include "server/app/drain.h"

#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <stop_token>
#include <string>
#include <thread>

#include "common/log.h"
#include "common/unique_fd.h"

namespace imgmcp::app {
namespace {

using Clock = std::chrono::steady_clock;
constexpr char kLog[] = "drain";

std::string Seconds(Clock::duration d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + " s";
}

std::string SignalName(int signal_number) {
  const char* name = sigabbrev_np(signal_number);
  return name != nullptr ? std::string("SIG") + name : "signal " + std::to_string(signal_number);
}

void Drained(int fd) {
  uint64_t count;
  while (::read(fd, &count, sizeof count) > 0) {
  }
}

// What the drain waits for, each woken, never polled: another stop signal (a signalfd of the
// blocked signals), the listener's last POST answered (its idle eventfd), the server's last task
// ended (an eventfd a helper thread writes when TaskRunner::WaitIdle returns, once no new task
// can start), or a time.
class DrainWaits {
 public:
  enum class Woke { kSignal, kChange, kTime };

  DrainWaits(const sigset_t& signals, int listener_idle_fd)
      : signal_fd_(::signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK)),
        tasks_idle_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
        listener_idle_fd_(listener_idle_fd) {}

  // From now on the end of the last task wakes WaitUntil. Only once new calls are refused: no
  // task starts after this.
  void WatchTasks(mcp::TaskRunner& tasks, Clock::time_point deadline) {
    tasks_watch_ = std::jthread([this, &tasks, deadline](std::stop_token stop) {
      if (!tasks.WaitIdle(deadline, stop)) return;
      const uint64_t one = 1;
      (void)!::write(tasks_idle_.get(), &one, sizeof one);
    });
  }

  // Waits until `until`, a signal or a change. A signal is consumed and logged.
  Woke WaitUntil(Clock::time_point until) {
    while (true) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now());
      if (left.count() <= 0) return Woke::kTime;
      pollfd fds[3] = {{signal_fd_.get(), POLLIN, 0},
                       {listener_idle_fd_, POLLIN, 0},
                       {tasks_idle_.get(), POLLIN, 0}};
      const int n = ::poll(fds, 3, static_cast<int>(std::min<int64_t>(left.count(), INT32_MAX)));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return n == 0 ? Woke::kTime : Woke::kChange;
      if (fds[0].revents != 0) {
        signalfd_siginfo info{};
        if (::read(signal_fd_.get(), &info, sizeof info) == sizeof info) {
          log::Info(kLog, SignalName(static_cast<int>(info.ssi_signo)) + " again: stopping now");
          return Woke::kSignal;
        }
      }
      if (fds[1].revents != 0) Drained(listener_idle_fd_);
      if (fds[2].revents != 0) Drained(tasks_idle_.get());
      return Woke::kChange;
    }
  }

 private:
  const UniqueFd signal_fd_;
  const UniqueFd tasks_idle_;
  const int listener_idle_fd_;
  std::jthread tasks_watch_;  // last: stopped (and joined) first
};

// Step 1: serves on until no request besides health checks came for kQuietWindow (or the notice
// window's cap passed). False: the deadline passed or a signal came first. Each wait ends when
// the window of the latest request would close; no wake-ups between.
bool AwaitQuiet(http::HttpListener& listener, DrainWaits& waits, Clock::time_point start,
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
    const Clock::time_point quiet_at =
        std::max(listener.Activity().last_request, start) + kQuietWindow;
    if (Clock::now() >= quiet_at) {
      log::Info(kLog, "no new requests for " + Seconds(kQuietWindow));
      return true;
    }
    if (waits.WaitUntil(std::min({quiet_at, notice_ends, deadline})) == DrainWaits::Woke::kSignal) {
      return false;
    }
  }
  return false;
}

// Step 2: waits for the POSTs being answered and the tasks running. False: the deadline passed or
// a signal came first.
bool AwaitIdle(http::HttpListener& listener, mcp::TaskRunner& tasks, DrainWaits& waits,
               Clock::time_point deadline) {
  while (listener.Activity().busy > 0 || tasks.Running() > 0) {
    if (Clock::now() >= deadline || waits.WaitUntil(deadline) == DrainWaits::Woke::kSignal) {
      return false;
    }
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
  DrainWaits waits(signals, listener.Activity().idle_fd);
  const bool on_time = AwaitQuiet(listener, waits, start, deadline);
  listener.RefuseNewCalls();
  waits.WatchTasks(tasks, deadline);
  if (on_time) {
    log::Info(kLog, "refusing new calls; " + std::to_string(listener.Activity().busy) +
                        " request(s) and " + std::to_string(tasks.Running()) +
                        " task(s) in flight may finish");
    AwaitIdle(listener, tasks, waits, deadline);
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
