#include "server/app/stop_signals.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "common/log.h"

namespace imgmcp::app {

sigset_t StopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  return signals;
}

namespace {
int StopSignalFd() {
  const sigset_t signals = StopSignals();
  const int fd = ::signalfd(-1, &signals, SFD_CLOEXEC);
  if (fd < 0) {  // only without descriptors left, at start-up: then only SIGKILL stops it
    log::Error("main",
               "cannot watch SIGTERM and SIGINT (signalfd failed): stop the server with "
               "SIGKILL");
  }
  return fd;
}
}  // namespace

StopSignalWatch::StopSignalWatch()
    : signal_fd_(StopSignalFd()), wake_fd_(::eventfd(0, EFD_CLOEXEC)) {}

std::optional<int> StopSignalWatch::Next(std::stop_token stop) {
  const int wake = wake_fd_.get();
  const std::stop_callback wake_on_stop(stop, [wake] {
    const uint64_t one = 1;
    (void)!::write(wake, &one, sizeof one);
  });
  while (!stop.stop_requested()) {
    pollfd fds[2] = {{signal_fd_.get(), POLLIN, 0}, {wake, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;  // cannot wait: as if stopped (the caller's thread ends)
    }
    if (fds[1].revents != 0) return std::nullopt;
    signalfd_siginfo info{};
    if (fds[0].revents != 0 && ::read(signal_fd_.get(), &info, sizeof info) == sizeof info) {
      return static_cast<int>(info.ssi_signo);
    }
  }
  return std::nullopt;
}

}  // namespace imgmcp::app
