#include "session/sqlite/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <thread>

#include "common/thread_annotations.h"

namespace imgmcp::session::sqlite {
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

// A blocking flock(LOCK_EX) on its own thread, which the waiter can leave at any time: flock has
// no cancellable wait, so the waiter waits on `done` instead. Whoever is last decides who owns the
// descriptor: the waiter takes it when the lock came in time; an abandoned lock is closed by the
// thread (which gives the lock straight back).
struct BlockingFlock {
  Mutex mu;  // guards done, abandoned and error
  std::condition_variable_any done_cv;
  bool done GUARDED_BY(mu) = false;
  bool abandoned GUARDED_BY(mu) = false;
  int error GUARDED_BY(mu) = 0;  // errno of a failed flock
  int fd = -1;                   // set before the thread starts; read-only afterwards

  static std::shared_ptr<BlockingFlock> Start(int fd) {
    auto state = std::make_shared<BlockingFlock>();
    state->fd = fd;
    std::thread([state] {
      int err = 0;
      while (::flock(state->fd, LOCK_EX) != 0) {
        if (errno != EINTR) {
          err = errno;
          break;
        }
      }
      MutexLock lock(state->mu);
      if (state->abandoned) {
        ::close(state->fd);  // nobody waits any more: the lock (if taken) goes straight back
        return;
      }
      state->error = err;
      state->done = true;
      state->done_cv.notify_all();
    }).detach();
    return state;
  }
};

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

Result<FileLock> FileLock::Acquire(const std::filesystem::path& path, std::stop_token cancel,
                                   const std::function<void()>& on_blocked) {
  ASSIGN_OR_RETURN(int fd, OpenLockFile(path));
  FileLock lock(fd);
  const int got = TryFlock(lock.fd_);
  if (got == 1) return lock;
  if (got < 0) {
    return MakeError(ErrorCode::kInternal,
                     "cannot lock " + path.string() + ": " + std::strerror(errno));
  }
  if (on_blocked) on_blocked();  // another process holds the session
  if (cancel.stop_requested()) {
    return MakeError(ErrorCode::kCancelled, "cancelled while waiting for the session lock");
  }
  std::shared_ptr<BlockingFlock> waiter = BlockingFlock::Start(lock.fd_);
  lock.fd_ = -1;  // the waiting thread holds the descriptor until it hands it over
  MutexLock guard(waiter->mu);
  const auto done = [&] {
    waiter->mu.AssertHeld();
    return waiter->done;
  };
  if (!waiter->done_cv.wait(guard, cancel, done)) {
    waiter->abandoned = true;
    return MakeError(ErrorCode::kCancelled, "cancelled while waiting for the session lock");
  }
  if (waiter->error != 0) {
    ::close(waiter->fd);
    return MakeError(ErrorCode::kInternal,
                     "cannot lock " + path.string() + ": " + std::strerror(waiter->error));
  }
  return FileLock(waiter->fd);
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

}  // namespace imgmcp::session::sqlite
