// UniqueFd: the one owner of a POSIX file descriptor in imgmcp — closed when it goes, moved, never
// copied. Every descriptor the code opens lives in one of these (no bare ::close elsewhere).
#pragma once

#include <unistd.h>

#include <cerrno>
#include <utility>

namespace imgmcp {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) Reset(other.Release());
    return *this;
  }

  bool valid() const { return fd_ >= 0; }
  int get() const { return fd_; }
  // Gives the descriptor up without closing it.
  int Release() { return std::exchange(fd_, -1); }
  // Closes the descriptor now: 0, or the errno of close(2) — where a file system may report a
  // failed write-back for the first time. The descriptor is gone either way (never closed twice).
  int Close() {
    const int fd = Release();
    if (fd < 0) return 0;
    return ::close(fd) == 0 ? 0 : errno;
  }
  // Closes the descriptor held (if any) and holds `fd` instead.
  void Reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace imgmcp
