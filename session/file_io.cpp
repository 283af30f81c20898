#include "session/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

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
    RETURN_IF_ERROR(EnsureDir(dir.parent_path()));
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

namespace {

// Writes all of `bytes` at the current offset of `fd`, retrying short writes and EINTR. Returns
// 0 or the errno of the failed write.
int WriteAll(int fd, const char* p, size_t left) {
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return 0;
}

// Files at least this big bypass the page cache (see WriteDirect).
constexpr size_t kDirectWriteMin = 256 * 1024;
// Buffer address, offset and length alignment that satisfies O_DIRECT on 512-byte and 4 KiB
// sector devices alike.
constexpr size_t kDirectAlign = 4096;

// Writes `bytes` to the fresh, empty `fd` with O_DIRECT: the data goes from one aligned copy
// straight to the device instead of into newly allocated page-cache pages, which on a 2.8 MB
// image costs several times the copy itself and then most of the fsync. The last block is
// zero-padded and the file cut back to its true length. Returns false (with the fd still empty,
// offset 0) when the file system refuses direct I/O, so the caller writes through the page
// cache instead; sets *err on a real write failure.
bool WriteDirect(int fd, std::string_view bytes, int* err) {
  *err = 0;
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_DIRECT) != 0) return false;
  auto buffered_again = [&] { return ::fcntl(fd, F_SETFL, flags) == 0; };
  const size_t padded = (bytes.size() + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
  std::unique_ptr<char, decltype(&std::free)> buffer(
      static_cast<char*>(std::aligned_alloc(kDirectAlign, padded)), &std::free);
  if (buffer == nullptr) {
    buffered_again();
    return false;
  }
  std::memcpy(buffer.get(), bytes.data(), bytes.size());
  std::memset(buffer.get() + bytes.size(), 0, padded - bytes.size());
  const int write_err = WriteAll(fd, buffer.get(), padded);
  if (write_err == EINVAL) {  // alignment or direct I/O not supported here after all
    if (!buffered_again() || ::ftruncate(fd, 0) != 0 || ::lseek(fd, 0, SEEK_SET) != 0) {
      *err = errno;
      return true;
    }
    return false;
  }
  if (write_err != 0) {
    *err = write_err;
    return true;
  }
  if (::ftruncate(fd, static_cast<off_t>(bytes.size())) != 0) *err = errno;
  return true;
}

}  // namespace

Status WriteFileAtomically(const std::filesystem::path& dir, std::string_view name,
                           std::string_view bytes, std::string_view temp_prefix, Sync sync) {
  const std::filesystem::path temp = dir / (std::string(temp_prefix) + RandomHex(8));
  const std::filesystem::path final_path = dir / std::string(name);
  Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (fd.get() < 0) return ErrnoError("cannot create", temp, errno);
  auto fail = [&](std::string_view what, const std::filesystem::path& p, int err) -> Status {
    ::unlink(temp.c_str());
    return ErrnoError(what, p, err);
  };
  const bool durable = sync == Sync::kDurable;
  int err = 0;
  const bool direct =
      durable && bytes.size() >= kDirectWriteMin && WriteDirect(fd.get(), bytes, &err);
  if (!direct) err = WriteAll(fd.get(), bytes.data(), bytes.size());
  if (err != 0) return fail("cannot write", temp, err);
  if (durable && ::fsync(fd.get()) != 0) return fail("cannot fsync", temp, errno);
  if (::close(fd.Release()) != 0) return fail("cannot close", temp, errno);
  if (::rename(temp.c_str(), final_path.c_str()) != 0) {
    return fail("cannot rename to", final_path, errno);
  }
  return durable ? SyncDir(dir) : Status::Ok();
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
