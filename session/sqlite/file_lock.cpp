#include "session/sqlite/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <thread>

#include "common/posix_io.h"
#include "common/thread_annotations.h"

namespace imgmcp::session::sqlite {
namespace {

Result<UniqueFd> OpenLockFile(const std::filesystem::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    return MakeError(ErrorCode::kInternal,
                     "cannot open lock file " + path.string() + ": " + ErrnoText(errno));
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
  Mutex mu;  // guards done, abandoned, error and fd
  std::condition_variable_any done_cv;
  bool done GUARDED_BY(mu) = false;
  bool abandoned GUARDED_BY(mu) = false;
  int error GUARDED_BY(mu) = 0;  // errno of a failed flock
  // The thread's while it waits; then the waiter's, or closed by the thread when abandoned.
  UniqueFd fd GUARDED_BY(mu);

  static std::shared_ptr<BlockingFlock> Start(UniqueFd fd) {
    auto state = std::make_shared<BlockingFlock>();
    const int raw = fd.get();  // the thread flocks it while the descriptor lives in `state`
    {
      MutexLock lock(state->mu);
      state->fd = std::move(fd);
    }
    std::thread([state, raw] {
      int err = 0;
      while (::flock(raw, LOCK_EX) != 0) {
        if (errno != EINTR) {
          err = errno;
          break;
        }
      }
      MutexLock lock(state->mu);
      if (state->abandoned) {
        state->fd.Reset();  // nobody waits any more: the lock (if taken) goes straight back
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

Result<FileLock> FileLock::Acquire(const std::filesystem::path& path, std::stop_token cancel,
                                   const std::function<void()>& on_blocked) {
  ASSIGN_OR_RETURN(UniqueFd fd, OpenLockFile(path));
  const int got = TryFlock(fd.get());
  if (got == 1) return FileLock(std::move(fd));
  if (got < 0) {
    return MakeError(ErrorCode::kInternal,
                     "cannot lock " + path.string() + ": " + ErrnoText(errno));
  }
  if (on_blocked) on_blocked();  // another process holds the session
  if (cancel.stop_requested()) {
    return MakeError(ErrorCode::kCancelled, "cancelled while waiting for the session lock");
  }
  // The waiting thread holds the descriptor until it hands it over.
  std::shared_ptr<BlockingFlock> waiter = BlockingFlock::Start(std::move(fd));
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
    waiter->fd.Reset();
    return MakeError(ErrorCode::kInternal,
                     "cannot lock " + path.string() + ": " + ErrnoText(waiter->error));
  }
  return FileLock(std::move(waiter->fd));
}

Result<std::optional<FileLock>> FileLock::TryAcquire(const std::filesystem::path& path) {
  ASSIGN_OR_RETURN(UniqueFd fd, OpenLockFile(path));
  const int got = TryFlock(fd.get());
  if (got < 0) {
    return MakeError(ErrorCode::kInternal,
                     "cannot lock " + path.string() + ": " + ErrnoText(errno));
  }
  if (got == 0) return std::optional<FileLock>();
  return std::optional<FileLock>(FileLock(std::move(fd)));
}

}  // namespace imgmcp::session::sqlite
