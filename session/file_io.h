// The session store's files: directories 0700, files 0600, atomic replace-by-rename with the
// fsyncs that make a crash leave either the old state or the new one. The I/O itself (and
// ReadWholeFile, SyncDir) is common/posix_io.h's; this is the store's use of it.
#pragma once

#include <filesystem>
#include <string_view>

#include "common/posix_io.h"
#include "common/result.h"

namespace imgmcp::session {

// Creates `dir` (and missing parents) with mode 0700 and fsyncs the parent of each directory it
// creates. Existing directories are left as they are.
Status EnsureDir(const std::filesystem::path& dir);

// Writes `bytes` as `dir/name`, mode 0600, through a temp file named `temp_prefix`… in `dir`
// (WriteFileAtomically of common/posix_io.h): readers see the old file or the whole new one,
// never a part. With Sync::kDurable the file is durable under its final name on return, big
// files written with direct I/O where the file system allows it. On failure the temp file is
// removed.
Status WriteFileAtomically(const std::filesystem::path& dir, std::string_view name,
                           std::string_view bytes, std::string_view temp_prefix,
                           Sync sync = Sync::kDurable);

// Unlinks `path`; a missing file is not an error. Returns false (and logs) on other failures.
bool RemoveFileQuietly(const std::filesystem::path& path);

}  // namespace imgmcp::session
