#include "session/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "common/random.h"

namespace imgmcp::session {
namespace {

Error ErrnoError(std::string_view what, const std::filesystem::path& path, int err) {
  ErrorCode code = ErrorCode::kInternal;
  if (err == ENOENT) code = ErrorCode::kNotFound;
  if (err == EACCES || err == EPERM || err == EROFS) code = ErrorCode::kPermissionDenied;
  if (err == ENOSPC || err == EDQUOT) code = ErrorCode::kResourceExhausted;
  return Error(code, std::string(what) + " " + path.string() + ": " + std::strerror(err));
}

// Closes an fd when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

}  // namespace

Status EnsureDir(const std::filesystem::path& dir) {
  if (dir.empty()) return Status::Ok();
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::Ok();
    return MakeError(ErrorCode::kFailedPrecondition,
                     dir.string() + " exists and is not a directory");
  }
  if (dir.has_parent_path() && dir.parent_path() != dir) {
    Status parent = EnsureDir(dir.parent_path());
    if (!parent.ok()) return parent;
  }
  if (::mkdir(dir.c_str(), 0700) != 0) {
    if (errno == EEXIST) return Status::Ok();  // made concurrently by another thread or process
    return ErrnoError("cannot create directory", dir, errno);
  }
  // Make the new entry durable too: a committed row must never outlive its directory.
  return dir.has_parent_path() ? SyncDir(dir.parent_path()) : Status::Ok();
}

Status SyncDir(const std::filesystem::path& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoError("cannot open directory", dir, errno);
  if (::fsync(fd.get()) != 0) return ErrnoError("cannot fsync directory", dir, errno);
  return Status::Ok();
}

Status WriteFileDurably(const std::filesystem::path& dir, std::string_view name,
                        std::string_view bytes, std::string_view temp_prefix) {
  const std::filesystem::path temp = dir / (std::string(temp_prefix) + RandomHex(8));
  const std::filesystem::path final_path = dir / std::string(name);
  Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (fd.get() < 0) return ErrnoError("cannot create", temp, errno);
  auto fail = [&](std::string_view what, const std::filesystem::path& p) -> Status {
    const int err = errno;
    ::unlink(temp.c_str());
    return ErrnoError(what, p, err);
  };
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd.get(), p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("cannot write", temp);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return fail("cannot fsync", temp);
  if (::close(fd.Release()) != 0) return fail("cannot close", temp);
  if (::rename(temp.c_str(), final_path.c_str()) != 0) return fail("cannot rename to", final_path);
  return SyncDir(dir);
}

Result<std::string> ReadWholeFile(const std::filesystem::path& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoError("cannot open", path, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoError("cannot stat", path, errno);
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("cannot read", path, errno);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

bool RemoveFileQuietly(const std::filesystem::path& path) {
  if (::unlink(path.c_str()) == 0 || errno == ENOENT) return true;
  log::Warn("session", "cannot remove " + path.string() + ": " + std::strerror(errno));
  return false;
}

}  // namespace imgmcp::session
