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

// Writes `bytes` to a temp file (name starting `temp_prefix`) in `dir`, fsyncs it, renames it to
// `dir/name`, then fsyncs `dir`. On return the file is durable under its final name. On failure
// the temp file is removed. Big files are written with direct I/O where the file system allows
// it (much cheaper than filling fresh page-cache pages and flushing them), else buffered.
Status WriteFileDurably(const std::filesystem::path& dir, std::string_view name,
                        std::string_view bytes, std::string_view temp_prefix);

// Writes `bytes` to a temp file in `dir` and renames it to `dir/name`: readers see the old file or
// the whole new one, never a part. Not fsynced — for caches that can be written again.
Status WriteFileAtomically(const std::filesystem::path& dir, std::string_view name,
                           std::string_view bytes, std::string_view temp_prefix);

// Reads a whole file. kNotFound when it does not exist.
Result<std::string> ReadWholeFile(const std::filesystem::path& path);

// fsync on a directory so renames/unlinks in it are durable.
Status SyncDir(const std::filesystem::path& dir);

// Unlinks `path`; a missing file is not an error. Returns false (and logs) on other failures.
bool RemoveFileQuietly(const std::filesystem::path& path);

}  // namespace imgmcp::session
