#include "session/file_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "common/posix_io.h"

namespace imgmcp::session {

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

Status WriteFileAtomically(const std::filesystem::path& dir, std::string_view name,
                           std::string_view bytes, std::string_view temp_prefix, Sync sync) {
  return imgmcp::WriteFileAtomically(
      dir, name, bytes,
      {.temp_prefix = temp_prefix, .mode = 0600, .sync = sync, .direct_io = true});
}

bool RemoveFileQuietly(const std::filesystem::path& path) {
  if (::unlink(path.c_str()) == 0 || errno == ENOENT) return true;
  log::Warn("session", "cannot remove " + path.string() + ": " + ErrnoText(errno));
  return false;
}

}  // namespace imgmcp::session
