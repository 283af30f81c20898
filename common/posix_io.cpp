#include "common/posix_io.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2, RENAME_NOREPLACE
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "common/random.h"
#include "common/unique_fd.h"

namespace imgmcp {

namespace fs = std::filesystem;

ErrorCode ErrnoCode(int err) {
  switch (err) {
    case ENOENT:
      return ErrorCode::kNotFound;
    case EACCES:
    case EPERM:
    case EROFS:
      return ErrorCode::kPermissionDenied;
    case ENOSPC:
    case EDQUOT:
      return ErrorCode::kResourceExhausted;
    case EEXIST:
      return ErrorCode::kConflict;
    default:
      return ErrorCode::kInternal;
  }
}

std::string ErrnoText(int err) {
  char buffer[256];
  // GNU strerror_r: returns the text, in `buffer` or a static string of its own.
  return ::strerror_r(err, buffer, sizeof buffer);
}

Error ErrnoError(std::string_view what, const fs::path& path, int err) {
  return Error(ErrnoCode(err), std::string(what) + " " + path.string() + ": " + ErrnoText(err));
}

int WriteAll(int fd, std::string_view bytes) {
  const char* p = bytes.data();
  size_t left = bytes.size();
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

int ReadAll(int fd, std::string* out, size_t max) {
  constexpr size_t kChunk = 64 << 10;
  size_t got = 0;
  while (got < max) {
    const size_t before = out->size();
    const size_t spare = out->capacity() - before;
    ssize_t n;
    if (spare > 0) {  // straight into the string
      const size_t want = std::min(spare, max - got);
      out->resize(before + want);
      n = ::read(fd, out->data() + before, want);
      out->resize(before + static_cast<size_t>(std::max<ssize_t>(n, 0)));
    } else {  // a full string is not grown (and copied) just to find the end of the file
      char buffer[kChunk];
      n = ::read(fd, buffer, std::min(sizeof buffer, max - got));
      if (n > 0) out->append(buffer, static_cast<size_t>(n));
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  return 0;
}

Result<std::string> ReadWholeFile(const fs::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError("cannot open", path, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoError("cannot stat", path, errno);
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  if (const int err = ReadAll(fd.get(), &out); err != 0) {
    return ErrnoError("cannot read", path, err);
  }
  return out;
}

Status SyncDir(const fs::path& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError("cannot open directory", dir, errno);
  if (::fsync(fd.get()) != 0) return ErrnoError("cannot fsync directory", dir, errno);
  return Status::Ok();
}

int MoveWithoutReplacing(int dir, const std::string& from, const std::string& to,
                         NoReplaceMethod method) {
  if (method == NoReplaceMethod::kRenameNoReplace) {
    if (::renameat2(dir, from.c_str(), dir, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
    return errno;
  }
  // A hard link fails with EEXIST when `to` exists, atomically; the temp name then goes.
  if (::linkat(dir, from.c_str(), dir, to.c_str(), 0) != 0) return errno;
  ::unlinkat(dir, from.c_str(), 0);
  return 0;
}

namespace {

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
  const int write_err = WriteAll(fd, std::string_view(buffer.get(), padded));
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

// Writes all of `bytes` to the fresh temp file `fd` as `options` say. 0 or an errno.
int WriteTemp(int fd, std::string_view bytes, const AtomicWriteOptions& options) {
  if (options.fail_writes_with != 0) return options.fail_writes_with;
  int err = 0;
  if (options.direct_io && options.sync == Sync::kDurable && bytes.size() >= kDirectWriteMin &&
      WriteDirect(fd, bytes, &err)) {
    return err;
  }
  return WriteAll(fd, bytes);
}

// Moves the temp file onto `name`: replacing, or never replacing (renameat2 RENAME_NOREPLACE,
// else a hard link where the file system does not offer it). 0 or the errno.
int MoveIntoPlace(int dir, const std::string& temp, const std::string& name, bool replace) {
  if (replace) return ::renameat(dir, temp.c_str(), dir, name.c_str()) == 0 ? 0 : errno;
  const int err = MoveWithoutReplacing(dir, temp, name, NoReplaceMethod::kRenameNoReplace);
  if (err != EINVAL && err != ENOSYS && err != ENOTSUP) return err;
  return MoveWithoutReplacing(dir, temp, name, NoReplaceMethod::kLink);
}

}  // namespace

Status WriteFileAtomicallyAt(int dir, std::string_view name, std::string_view bytes,
                             const fs::path& shown, const AtomicWriteOptions& options) {
  const std::string temp =
      std::string(options.temp_prefix) + RandomHex(8) + std::string(options.temp_suffix);
  const fs::path shown_dir = shown.parent_path();
  const fs::path shown_temp = shown_dir / temp;
  UniqueFd fd(::openat(dir, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                       options.mode));
  if (!fd.valid()) return ErrnoError("cannot create", shown_temp, errno);
  auto fail = [&](std::string_view what, const fs::path& path, int err) -> Status {
    ::unlinkat(dir, temp.c_str(), 0);
    return ErrnoError(what, path, err);
  };
  const bool durable = options.sync == Sync::kDurable;
  if (const int err = WriteTemp(fd.get(), bytes, options); err != 0) {
    return fail("cannot write", shown_temp, err);
  }
  if (durable && ::fsync(fd.get()) != 0) return fail("cannot fsync", shown_temp, errno);
  if (const int err = fd.Close(); err != 0) return fail("cannot close", shown_temp, err);
  if (const int err = MoveIntoPlace(dir, temp, std::string(name), options.replace); err != 0) {
    if (err == EEXIST && !options.replace) {
      ::unlinkat(dir, temp.c_str(), 0);
      return Error(ErrorCode::kConflict,
                   shown.string() + " already exists" + std::string(options.conflict_note));
    }
    return fail("cannot rename to", shown, err);
  }
  if (durable && ::fsync(dir) != 0) return ErrnoError("cannot fsync directory", shown_dir, errno);
  return Status::Ok();
}

Status WriteFileAtomically(const fs::path& dir, std::string_view name, std::string_view bytes,
                           const AtomicWriteOptions& options) {
  const UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError("cannot open directory", dir, errno);
  return WriteFileAtomicallyAt(fd.get(), name, bytes, dir / std::string(name), options);
}

}  // namespace imgmcp
