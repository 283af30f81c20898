#include "server/tools/rooted_write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/posix_io.h"

namespace imgmcp::tools {

namespace fs = std::filesystem;

namespace {

DirIdentity IdentityOfFd(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return {};
  return DirIdentity{st.st_dev, st.st_ino, true};
}

Error ForbiddenDir(const fs::path& shown) {
  return Error(ErrorCode::kPermissionDenied,
               shown.string() +
                   " is imgmcp's data directory, which only imgmcp writes; choose a path "
                   "outside it");
}

// Why `name` in `dir` could not be opened as a directory without following it.
Error NotADirectory(int dir, const std::string& name, const fs::path& shown, int err) {
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode)) {
      return Error(ErrorCode::kPermissionDenied,
                   shown.string() +
                       " is a symbolic link; saving never follows symlinks (name the real "
                       "directory instead)");
    }
    if (!S_ISDIR(st.st_mode)) {
      return Error(ErrorCode::kFailedPrecondition, shown.string() + " is not a directory");
    }
  }
  return ErrnoError("cannot open directory", shown, err);
}

// Opens directory `name` below `parent` without following a symlink; creates it first when
// `mode` says so and it is missing. An invalid fd with no error: missing in kCheck mode.
Result<UniqueFd> OpenChild(int parent, const std::string& name, const fs::path& shown,
                           WalkMode mode) {
  constexpr int kFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  UniqueFd fd(::openat(parent, name.c_str(), kFlags));
  if (fd.valid()) return fd;
  if (errno != ENOENT) return NotADirectory(parent, name, shown, errno);
  if (mode == WalkMode::kCheck) return UniqueFd();
  if (::mkdirat(parent, name.c_str(), 0777) != 0 && errno != EEXIST) {
    return ErrnoError("cannot create directory", shown, errno);
  }
  // The new entry is durable before anything is written below it.
  if (::fsync(parent) != 0) return ErrnoError("cannot fsync the directory above", shown, errno);
  // Opened again without following: whatever is there now (made by us or by someone else in
  // the meantime) must be a real directory.
  fd = UniqueFd(::openat(parent, name.c_str(), kFlags));
  if (!fd.valid()) return NotADirectory(parent, name, shown, errno);
  return fd;
}

}  // namespace

DirIdentity IdentityOf(const fs::path& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return {};
  return DirIdentity{st.st_dev, st.st_ino, true};
}

std::vector<fs::path> AllowedRoots(const std::vector<fs::path>& dirs, bool* root_left_out) {
  std::vector<fs::path> roots;
  bool left_out = false;
  for (const fs::path& dir : dirs) {
    std::error_code ec;
    fs::path canonical = fs::canonical(dir, ec);
    if (ec || !fs::is_directory(canonical, ec)) continue;
    if (canonical == canonical.root_path()) {
      left_out = true;
      continue;
    }
    roots.push_back(std::move(canonical));
  }
  if (root_left_out != nullptr) *root_left_out = left_out;
  return roots;
}

Result<Walk> WalkBelowRoot(const fs::path& root, const std::vector<std::string>& dirs,
                           WalkMode mode, const DirIdentity& forbidden) {
  Walk walk;
  walk.dir = UniqueFd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!walk.dir.valid()) return ErrnoError("cannot open the allowed directory", root, errno);
  if (IdentityOfFd(walk.dir.get()) == forbidden) return ForbiddenDir(root);
  fs::path shown = root;
  for (const std::string& name : dirs) {
    shown /= name;
    ASSIGN_OR_RETURN(UniqueFd child, OpenChild(walk.dir.get(), name, shown, mode));
    if (!child.valid()) return walk;  // kCheck: the rest does not exist yet
    if (IdentityOfFd(child.get()) == forbidden) return ForbiddenDir(shown);
    walk.dir = std::move(child);
  }
  walk.complete = true;
  return walk;
}

Result<EntryKind> EntryAt(int dir, const std::string& name, const fs::path& shown) {
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return EntryKind::kMissing;
    return ErrnoError("cannot look at", shown, errno);
  }
  if (S_ISREG(st.st_mode)) return EntryKind::kRegular;
  if (S_ISDIR(st.st_mode)) return EntryKind::kDirectory;
  if (S_ISLNK(st.st_mode)) return EntryKind::kSymlink;
  return EntryKind::kOther;
}

std::string DescribeNonRegular(int dir, const std::string& name) {
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return "not a regular file";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  if (S_ISLNK(st.st_mode)) return "a symbolic link";
  if (S_ISDIR(st.st_mode)) return "a directory";
  return "not a regular file";
}

Status WriteFileBelow(int dir, const std::string& name, std::string_view bytes,
                      const fs::path& shown, const WriteOptions& options) {
  return WriteFileAtomicallyAt(
      dir, name, bytes, shown,
      {.temp_prefix = ".imgmcp-save-",
       .temp_suffix = ".tmp",
       .mode = 0666,
       .sync = Sync::kDurable,
       .replace = options.replace,
       .conflict_note = " (it appeared while the copy was written); pass overwrite: true to "
                        "replace it",
       .fail_writes_with = options.fail_writes_with});
}

}  // namespace imgmcp::tools
