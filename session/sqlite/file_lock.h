// An exclusive flock(2) on a lock file: the cross-process half of a session's turn. The kernel
// drops the lock when the holder's file descriptor closes — also when the process dies.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <stop_token>
#include <utility>

#include "common/result.h"
#include "common/unique_fd.h"

namespace imgmcp::session::sqlite {

class FileLock {
 public:
  // Opens (creating, 0600) `path` and waits for LOCK_EX. When another process holds it, a
  // blocking flock runs on a thread of its own while the caller waits to be woken by it or by
  // `cancel` (kCancelled at once; the thread then gives the lock back as soon as it gets it).
  // `on_blocked` (optional) runs once, on this thread, when the first attempt finds another
  // holder.
  static Result<FileLock> Acquire(const std::filesystem::path& path, std::stop_token cancel,
                                  const std::function<void()>& on_blocked = nullptr);
  // One attempt: nullopt when another holder has it.
  static Result<std::optional<FileLock>> TryAcquire(const std::filesystem::path& path);

  FileLock(FileLock&& other) noexcept = default;
  FileLock& operator=(FileLock&& other) noexcept = default;

  // Closing the only descriptor of the open file description drops the flock.
  void Release() { fd_.Reset(); }

 private:
  explicit FileLock(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

}  // namespace imgmcp::session::sqlite
