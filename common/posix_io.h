// POSIX file I/O that imgmcp does in more than one place — the session store's files
// (session/file_io.h) and save_to's copies (server/tools/rooted_write.h) — written once: whole
// writes and reads that survive short transfers and EINTR, an errno as an Error, directory fsync,
// and the atomic, durable replace-by-rename (temp file, fsync, rename, directory fsync) that
// leaves a crash either the old file or the whole new one.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>

#include "common/result.h"

namespace imgmcp {

// What an errno means for a file operation: ENOENT kNotFound; EACCES, EPERM, EROFS
// kPermissionDenied; ENOSPC, EDQUOT kResourceExhausted; EEXIST kConflict; anything else
// kInternal.
ErrorCode ErrnoCode(int err);
// What strerror says of `err` ("No such file or directory"), without strerror's shared buffer:
// safe to call from any thread.
std::string ErrnoText(int err);
// "<what> <path>: <strerror(err)>", with ErrnoCode(err).
Error ErrnoError(std::string_view what, const std::filesystem::path& path, int err);

// Writes all of `bytes` to `fd` at its offset, retrying short writes and EINTR. 0 or the errno
// of the write that failed.
int WriteAll(int fd, std::string_view bytes);
// Appends what `fd` has up to end of file (at most `max` bytes) to `out`, retrying short reads
// and EINTR; reads into `out`'s spare capacity first, so a caller that reserves the size it
// expects gets one read and no copy. 0 or the errno of the read that failed.
int ReadAll(int fd, std::string* out, size_t max = std::numeric_limits<size_t>::max());

// A whole file. kNotFound when it does not exist.
Result<std::string> ReadWholeFile(const std::filesystem::path& path);

// fsync on a directory, so the renames and unlinks in it are durable.
Status SyncDir(const std::filesystem::path& dir);

// How far a write goes before it returns.
enum class Sync {
  kDurable,  // the file and its directory entry are fsynced: durable under the final name
  kNone,     // not fsynced — for caches that can be written again
};

struct AtomicWriteOptions {
  std::string_view temp_prefix = ".tmp-";  // the temp file: prefix, 16 random hex digits, suffix
  std::string_view temp_suffix = {};
  mode_t mode = 0600;  // less the umask
  Sync sync = Sync::kDurable;
  // With Sync::kDurable, files of 256 KiB and more are written with O_DIRECT where the file
  // system allows it (much cheaper than filling fresh page-cache pages and then flushing them),
  // else buffered.
  bool direct_io = false;
  // false: never replace an existing file — renameat2(RENAME_NOREPLACE), or linkat + unlink where
  // the file system lacks it — and fail kConflict with "<path> already exists<conflict_note>".
  bool replace = true;
  std::string_view conflict_note = {};
  int fail_writes_with = 0;  // tests: every write fails with this errno (a full disk)
};

// Writes `bytes` to a temp file in the directory `dir` (a descriptor) and moves it to `name`
// there: readers see the old file or the whole new one, never a part. With Sync::kDurable the
// temp file is fsynced and closed before the move and `dir` fsynced after it, so on return the
// file is durable under its name. The temp file is created O_EXCL|O_NOFOLLOW and removed on
// every failure. Errors name files as `shown` (the final file) and its parent directory.
Status WriteFileAtomicallyAt(int dir, std::string_view name, std::string_view bytes,
                             const std::filesystem::path& shown,
                             const AtomicWriteOptions& options = {});
// The same in the directory at path `dir` (opened for the call).
Status WriteFileAtomically(const std::filesystem::path& dir, std::string_view name,
                           std::string_view bytes, const AtomicWriteOptions& options = {});

// How a no-replace move is made: the first that works.
enum class NoReplaceMethod { kRenameNoReplace, kLink };
// Moves `from` to `to` in `dir` without replacing an existing `to` (EEXIST then). 0 or an errno;
// both methods exist for tests.
int MoveWithoutReplacing(int dir, const std::string& from, const std::string& to,
                         NoReplaceMethod method);

}  // namespace imgmcp
