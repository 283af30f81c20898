// `save_to`: a copy of a version written where the caller asks (README.md, "Save where you want
// it"; docs/security.md, "File writes"). In three steps:
//   SaveArgs::Check  the four arguments' form alone, with no file system access (extension vs
//                    save_format, save_quality vs the format, no '..', no NUL);
//   SaveTargets::Plan  before any backend call: the allowed root the path lies in, the data dir
//                    refused, and a read-only walk of what exists (a symlink, something that is
//                    not a directory, an existing file without overwrite, a FIFO or device);
//   SaveTargets::Save  after the commit: the conversion, then the write, checked again on the way
//                    down from the root with openat(O_NOFOLLOW) (rooted_write.h), atomic and
//                    durable like a version.
// A failed save never touches the version: the tools report it beside the committed version.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "imaging/codec.h"
#include "server/tools/rooted_write.h"

namespace imgmcp::tools {

inline constexpr size_t kMaxSaveToBytes = 4096;
inline constexpr int kDefaultSaveQuality = 90;  // jpeg and webp, when save_quality is not given

// save_format's values: "png", "jpeg", "webp".
const std::vector<std::string>& SaveFormatNames();
// "png", "jpeg", "webp", "gif" ("" for kUnknown): what results call a saved copy's format.
std::string SaveFormatName(imaging::ImageFormat format);

extern const char kSaveToDescription[];

// The save arguments of generate_image, edit_image and get_image, beside their schema.
struct SaveArgs {
  std::optional<std::string> save_to;
  std::optional<std::string> save_format;  // default: the file name's extension, else the version's
  std::optional<int64_t> save_quality;     // 1-100, jpeg and webp only
  std::optional<bool> overwrite;           // replace an existing file (default false)

  template <typename V>
  void Fields(V& v) {
    v.String("save_to", save_to, kMaxSaveToBytes,
             kSaveToDescription + v.options().save_roots_description);
    v.Enum("save_format", save_format, SaveFormatNames(),
           "Optional, with save_to: convert the saved copy to png, jpeg or webp (the version "
           "itself keeps the model's bytes). Default: the format save_to's extension names, else "
           "the version's own. An extension that names another format is an error.");
    v.Integer("save_quality", save_quality, 1, 100,
              "Optional, with save_to: quality of a jpeg or webp copy, 1 to 100 (default 90).");
    v.Bool("overwrite", overwrite,
           "Optional, with save_to: true replaces a file that is already there (atomically). "
           "Default false: an existing file is never replaced.");
  }
  // Form only: the companions need save_to; extension, save_format and save_quality agree.
  Status Check(const std::string& where) const;
};

// A save_to taken apart (form only).
struct SaveRequest {
  std::vector<std::string> components;  // of the absolute path: no "", "." or ".."
  bool directory = false;               // ended in '/': the file is named <session>-v<N>.<ext>
  std::optional<imaging::ImageFormat> format;  // save_format, else the extension's; none: own
  std::optional<int> quality;
  bool overwrite = false;
};

// `args` (with save_to set) taken apart; a relative save_to starts at `working_dir`.
Result<SaveRequest> ParseSaveRequest(const SaveArgs& args,
                                     const std::filesystem::path& working_dir);

// Where a copy goes, once Plan has found its root.
struct SavePlan {
  std::filesystem::path root;                  // the allowed directory it lies in
  std::vector<std::string> dirs;               // directories below the root, outermost first
  std::string name;                            // the file's name; "" for a directory target
  std::optional<imaging::ImageFormat> format;  // none: the version's own
  std::optional<int> quality;
  bool overwrite = false;
};

// What Save wrote.
struct SavedCopy {
  std::filesystem::path path;  // absolute
  int64_t bytes = 0;
  imaging::ImageFormat format = imaging::ImageFormat::kUnknown;
  bool replaced = false;  // an earlier file was replaced (overwrite)
};

struct SaveOptions {
  std::filesystem::path working_dir;         // where relative save_to paths start
  std::vector<std::filesystem::path> roots;  // where writes are allowed
  std::filesystem::path data_dir;            // never written, however reached
  imaging::DecodeLimits limits;              // for converting
  // Test seams (Config's IMGMCP_TEST_SAVE_* hooks), unset in production: `pause` runs at
  // "before-walk" and "before-write" of every Save; every write of a copy fails with
  // `fail_writes_with` (an errno) when it is not 0.
  std::function<void(std::string_view point)> pause;
  int fail_writes_with = 0;
};

// What a copy is made of: a version about to be made (generate_image, edit_image: never a GIF,
// which no backend returns), or one already stored (get_image: an imported GIF is possible).
enum class SaveSource { kNewVersion, kStoredVersion };

class SaveTargets {
 public:
  // Canonicalises the working dir, the roots (AllowedRoots: those that do not exist, and /, are
  // left out) and the data dir.
  explicit SaveTargets(SaveOptions options);

  // nullopt without save_to. Otherwise the plan, or an error naming save_to and what is allowed.
  Result<std::optional<SavePlan>> Plan(const SaveArgs& args, SaveSource source) const;

  // Writes the copy of version `version` of `session_id` (its `bytes`), converted per the plan.
  Result<SavedCopy> Save(const SavePlan& plan, const std::string& session_id, int64_t version,
                         std::string_view bytes) const;

  // " Relative paths start at …; writable: …" for the save_to description.
  std::string DescribeRoots() const;

 private:
  // The deepest root whose directory holds `dir` (absolute components), or an error.
  Result<std::filesystem::path> RootOf(const std::vector<std::string>& dir,
                                       const std::string& shown) const;
  // The read-only walk of Plan: what is there now must not make the save fail.
  Status Preflight(const SavePlan& plan) const;
  // The copy's bytes in the plan's format.
  Result<std::string> Converted(const SavePlan& plan, std::string_view bytes,
                                imaging::ImageFormat* format) const;

  SaveOptions options_;
  DirIdentity data_dir_id_;
};

}  // namespace imgmcp::tools
