// File system steps for writing below a directory root that a path cannot escape: the root is
// opened with O_DIRECTORY|O_NOFOLLOW and each directory below it with
// openat(O_DIRECTORY|O_NOFOLLOW) from its parent's descriptor, so `..`, a symlink (to anywhere) or
// a directory swapped for a symlink mid-walk is refused instead of followed, and everything after
// the walk happens relative to the descriptor actually opened. The file itself is written to a
// temp name in that directory, fsynced, and moved into place with renameat (or renameat2
// RENAME_NOREPLACE / linkat when an existing file must not be replaced), then the directory is
// fsynced (common/posix_io.h). Used by save_target.h; knows nothing about tools or images.
// AllowedRoots, the rule of which directories may be roots at all, is shared with the reads of
// image_input.h.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"

namespace imgmcp::tools {

// A directory as the kernel knows it, to recognise one however it was reached.
struct DirIdentity {
  dev_t dev = 0;
  ino_t ino = 0;
  bool known = false;
  bool operator==(const DirIdentity& o) const {
    return known && o.known && dev == o.dev && ino == o.ino;
  }
};
DirIdentity IdentityOf(const std::filesystem::path& dir);

// The roots below which the paths a client names may lie — where {path} images are read from
// (image_input.h) and where save_to copies are written (save_target.h) — from the directories
// configured: each made canonical, and left out when it does not exist, is not a directory, or is
// the file system's root. `/` is never a root, whoever names it (the working directory of a
// server started in /, as some clients start their servers, or a flag): it would let a client
// read or overwrite every file the user can. `root_left_out` (optional) tells whether / was named.
std::vector<std::filesystem::path> AllowedRoots(const std::vector<std::filesystem::path>& dirs,
                                                bool* root_left_out = nullptr);

enum class WalkMode {
  kCheck,   // read only: stops at the first directory that does not exist yet
  kCreate,  // creates missing directories (mode 0777 less the umask; each new entry fsynced)
};

// How far a walk got.
struct Walk {
  UniqueFd dir;           // the deepest directory opened
  bool complete = false;  // every directory of the walk exists (kCreate: always, on success)
};

// Opens `root` and then `dirs` below it, one component at a time, never following a symlink.
// Refuses (kPermissionDenied) a symlink anywhere and any directory that is `forbidden` (the data
// dir, however it is reached); kFailedPrecondition for a component that is not a directory.
// Errors name the path as root/dirs… so far.
Result<Walk> WalkBelowRoot(const std::filesystem::path& root, const std::vector<std::string>& dirs,
                           WalkMode mode, const DirIdentity& forbidden);

// What is at `name` in the directory `dir` (lstat: a symlink is reported as one).
enum class EntryKind { kMissing, kRegular, kDirectory, kSymlink, kOther };
Result<EntryKind> EntryAt(int dir, const std::string& name, const std::filesystem::path& shown);
// "a FIFO", "a character device", … for a kOther entry's mode; used in refusals.
std::string DescribeNonRegular(int dir, const std::string& name);

struct WriteOptions {
  bool replace = false;  // replace an existing file (never a directory); otherwise fail kConflict
  int fail_writes_with = 0;  // tests: every write fails with this errno (a full disk)
};

// Writes `bytes` as `name` in `dir` (shown as `shown` in errors) with WriteFileAtomicallyAt of
// common/posix_io.h: a temp file ".imgmcp-save-….tmp" written, fsynced and closed, then moved
// into place, then `dir` fsynced. Without `replace` the move never replaces anything, so a file
// that appeared meanwhile is kept and the call fails kConflict. The temp file is removed on every
// failure. The file gets mode 0666 less the umask.
Status WriteFileBelow(int dir, const std::string& name, std::string_view bytes,
                      const std::filesystem::path& shown, const WriteOptions& options);

}  // namespace imgmcp::tools
