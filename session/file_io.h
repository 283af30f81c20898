// Durable file primitives: directories 0700, files 0600, atomic replace-by-rename with the fsyncs
// that make a crash leave either the old state or the new one.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "common/result.h"

namespace imgmcp::session {

// Creates `dir` (and missing parents) with mode 0700 and fsyncs the parent of each directory it
// creates. Existing directories are left as they are.
Status EnsureDir(const std::filesystem::path& dir);

// How far a write goes before it returns.
enum class Sync {
  kDurable,  // the file and its directory entry are fsynced: durable under the final name
  kNone,     // not fsynced — for caches that can be written again
};

// Writes `bytes` to a temp file (name starting `temp_prefix`) in `dir` and renames it to
// `dir/name`: readers see the old file or the whole new one, never a part. With Sync::kDurable the
// temp file is fsynced before the rename and `dir` after it, so on return the file is durable
// under its final name; big files are then written with direct I/O where the file system allows
// it (much cheaper than filling fresh page-cache pages and flushing them), else buffered. On
// failure the temp file is removed.
Status WriteFileAtomically(const std::filesystem::path& dir, std::string_view name,
                           std::string_view bytes, std::string_view temp_prefix,
                           Sync sync = Sync::kDurable);

// Reads a whole file. kNotFound when it does not exist.
Result<std::string> ReadWholeFile(const std::filesystem::path& path);

// fsync on a directory so renames/unlinks in it are durable.
Status SyncDir(const std::filesystem::path& dir);

// Unlinks `path`; a missing file is not an error. Returns false (and logs) on other failures.
bool RemoveFileQuietly(const std::filesystem::path& path);

}  // namespace imgmcp::session
