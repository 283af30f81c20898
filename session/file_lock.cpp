#include "session/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace imgmcp::session {
namespace {

Result<int> OpenLockFile(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return MakeError(ErrorCode::kInternal,
                     "cannot open lock file " + path.string() + ": " + std::strerror(errno));
  }
  return fd;
}

// 1: locked, 0: held by someone else, -1: error (errno set).
int TryFlock(int fd) {
  while (true) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return 1;
    if (errno == EINTR) continue;
    return errno == EWOULDBLOCK ? 0 : -1;
  }
}

}  // namespace

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

void FileLock::Release() {
  if (fd_ >= 0) {
    ::close(fd_);  // closing the only descriptor of the open file description drops the flock
    fd_ = -1;
  }
}

Result<FileLock> FileLock::Acquire(const std::filesystem::path& path,
                                   const CancellationToken& cancel,
                                   const std::function<void()>& on_blocked) {
  ASSIGN_OR_RETURN(int fd, OpenLockFile(path));
  FileLock lock(fd);
  auto pause = std::chrono::microseconds(100);
  bool reported = false;
  while (true) {
    const int got = TryFlock(lock.fd_);
    if (got == 1) return lock;
    if (got < 0) {
      return MakeError(ErrorCode::kInternal,
                       "cannot lock " + path.string() + ": " + std::strerror(errno));
    }
    if (!reported && on_blocked) on_blocked();
    reported = true;
    if (cancel.IsCancelled()) {
      return MakeError(ErrorCode::kCancelled, "cancelled while waiting for the session lock");
    }
    // Another process holds the session; poll (flock has no timed or cancellable wait).
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(5000));
  }
}

Result<std::optional<FileLock>> FileLock::TryAcquire(const std::filesystem::path& path) {
  ASSIGN_OR_RETURN(int fd, OpenLockFile(path));
  FileLock lock(fd);
  const int got = TryFlock(lock.fd_);
  if (got < 0) {
    return MakeError(ErrorCode::kInternal,
                     "cannot lock " + path.string() + ": " + std::strerror(errno));
  }
  if (got == 0) return std::optional<FileLock>();
  return std::optional<FileLock>(std::move(lock));
}

}  // namespace imgmcp::session
