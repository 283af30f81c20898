#include "server/http/hangup_watch.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <utility>

namespace imgmcp::http {

void HangupAwareCondition::NotifyAll() {
  const int fd = wake_fd_.load();
  if (fd >= 0) {
    const uint64_t one = 1;
    // The counter only grows; a full counter (never in practice) still leaves the fd readable.
    [[maybe_unused]] ssize_t n = ::write(fd, &one, sizeof one);
  }
  cv_.notify_all();
}

bool HangupAwareCondition::WatchReady() {
  if (wake_fd_.load() >= 0) return true;
  UniqueFd fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!fd.valid()) return false;
  wake_fd_.store(fd.get());
  wake_ = std::move(fd);
  return true;
}

int HangupAwareCondition::TimeoutMs(Deadline deadline) {
  if (!deadline) return -1;
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, 1 << 30));
}

bool HangupAwareCondition::PollOnce(int timeout_ms) {
  const int wake_fd = wake_fd_.load();
  pollfd fds[2] = {{socket_, POLLRDHUP, 0}, {wake_fd, POLLIN, 0}};
  const int n = ::poll(fds, 2, timeout_ms);
  if (n < 0 && errno != EINTR) return true;  // the socket is unusable: treat as gone
  if (n > 0 && fds[1].revents != 0) {
    uint64_t count = 0;
    [[maybe_unused]] ssize_t r = ::read(wake_fd, &count, sizeof count);
  }
  return n > 0 && (fds[0].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

}  // namespace imgmcp::http
