#include "server/tools/save_target.h"

#include <algorithm>
#include <climits>
#include <system_error>
#include <utility>

#include "common/ascii.h"

namespace imgmcp::tools {

namespace fs = std::filesystem;

const char kSaveToDescription[] =
    "Optional. Also write the image to this file on the server's machine, e.g. "
    "\"assets/hero.png\", or into this directory when it ends in '/' (named "
    "<session_id>-v<version>.<ext>). Relative paths start at the server's working directory. "
    "Only below the directories the server allows, never into its data directory, never through "
    "a symlink; missing directories are created; an existing file is kept unless overwrite is "
    "true. The result's saved_to is the file written; if the copy cannot be written after the "
    "version was saved, save_error says why and the version stays.";

const std::vector<std::string>& SaveFormatNames() {
  static const std::vector<std::string> kNames = {"png", "jpeg", "webp"};
  return kNames;
}

std::string SaveFormatName(imaging::ImageFormat format) {
  switch (format) {
    case imaging::ImageFormat::kPng:
      return "png";
    case imaging::ImageFormat::kJpeg:
      return "jpeg";
    case imaging::ImageFormat::kWebp:
      return "webp";
    case imaging::ImageFormat::kGif:
      return "gif";
    case imaging::ImageFormat::kUnknown:
      break;
  }
  return "";
}

namespace {

std::optional<imaging::ImageFormat> FormatNamed(const std::string& name) {
  if (name == "png") return imaging::ImageFormat::kPng;
  if (name == "jpeg") return imaging::ImageFormat::kJpeg;
  if (name == "webp") return imaging::ImageFormat::kWebp;
  return std::nullopt;
}

// The format a file name's extension names (any case); nullopt for no extension; an error for
// an extension that names no image format imgmcp writes.
Result<std::optional<imaging::ImageFormat>> ExtensionFormat(const std::string& name) {
  const std::string ext = AsciiLower(fs::path(name).extension().string());
  if (ext.empty()) return std::optional<imaging::ImageFormat>();
  if (ext == ".png") return std::optional(imaging::ImageFormat::kPng);
  if (ext == ".jpg" || ext == ".jpeg") return std::optional(imaging::ImageFormat::kJpeg);
  if (ext == ".webp") return std::optional(imaging::ImageFormat::kWebp);
  if (ext == ".gif") return std::optional(imaging::ImageFormat::kGif);
  return InvalidArgument(
      "'save_to' ends in " + fs::path(name).extension().string() +
      ", which names no image format imgmcp writes; use .png, .jpg (or .jpeg) or "
      ".webp, or a directory ending in '/'");
}

// save_to split into path components; ".." refused, "" and "." dropped.
Status SplitPath(const std::string& text, SaveRequest& request) {
  if (text.empty()) {
    return InvalidArgument(
        "'save_to' is empty; give a file path such as assets/hero.png, or a directory "
        "ending in '/'");
  }
  if (text.find('\0') != std::string::npos) return InvalidArgument("'save_to' contains a NUL byte");
  request.directory = text.back() == '/';
  size_t start = 0;
  while (start <= text.size()) {
    const size_t slash = std::min(text.find('/', start), text.size());
    std::string part = text.substr(start, slash - start);
    start = slash + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      return InvalidArgument(
          "'save_to' contains '..'; give the path without it (relative paths start "
          "at the server's working directory)");
    }
    if (part.size() > NAME_MAX) {
      return InvalidArgument("'save_to' has a name of " + std::to_string(part.size()) +
                             " bytes; at most " + std::to_string(NAME_MAX) + " are allowed");
    }
    request.components.push_back(std::move(part));
  }
  if (request.components.empty()) request.directory = true;  // "/", ".", "./"
  return Status::Ok();
}

// The format of the copy (save_format, else the extension's) and whether save_quality fits it.
Status ChooseFormat(const SaveArgs& args, SaveRequest& request) {
  std::optional<imaging::ImageFormat> named;
  if (!request.directory) {
    ASSIGN_OR_RETURN(named, ExtensionFormat(request.components.back()));
  }
  if (args.save_format) {
    request.format = FormatNamed(*args.save_format);
    if (named && named != request.format) {
      return InvalidArgument(
          "'save_to' ends in " + fs::path(request.components.back()).extension().string() +
          " but 'save_format' is \"" + *args.save_format + "\"; give a name ending in " +
          "the save_format's extension, or leave save_format out");
    }
  } else {
    request.format = named;
  }
  if (args.save_quality) {
    if (request.format != imaging::ImageFormat::kJpeg &&
        request.format != imaging::ImageFormat::kWebp) {
      return InvalidArgument(
          "'save_quality' applies to jpeg and webp copies only; give save_format "
          "\"jpeg\" or \"webp\" (or a save_to ending in .jpg or .webp), or leave "
          "save_quality out");
    }
    request.quality = static_cast<int>(*args.save_quality);
  }
  return Status::Ok();
}

bool StartsWith(const std::vector<std::string>& path, const std::vector<std::string>& prefix) {
  if (prefix.size() > path.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (path[i] != prefix[i]) return false;
  }
  return true;
}

std::vector<std::string> ComponentsOf(const fs::path& absolute) {
  std::vector<std::string> out;
  for (const fs::path& part : absolute.relative_path()) {
    if (!part.empty()) out.push_back(part.string());
  }
  return out;
}

fs::path PathOf(const std::vector<std::string>& components, size_t count) {
  fs::path out = "/";
  for (size_t i = 0; i < count && i < components.size(); ++i) out /= components[i];
  return out;
}

fs::path Canonical(const fs::path& path) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? path.lexically_normal() : c;
}

}  // namespace

Status SaveArgs::Check(const std::string&) const {
  if (save_to) {
    auto request = ParseSaveRequest(*this, "/");
    if (!request.ok()) return request.error();
    return Status::Ok();
  }
  const char* lone = nullptr;
  if (save_format) {
    lone = "save_format";
  } else if (save_quality) {
    lone = "save_quality";
  } else if (overwrite) {
    lone = "overwrite";
  }
  if (lone == nullptr) return Status::Ok();
  return InvalidArgument(
      std::string("'") + lone +
      "' goes with 'save_to' (a file path, or a directory ending in '/'), which is "
      "missing");
}

Result<SaveRequest> ParseSaveRequest(const SaveArgs& args, const fs::path& working_dir) {
  SaveRequest request;
  const std::string& text = args.save_to.value_or("");
  if (!text.empty() && text.front() != '/') {
    request.components = ComponentsOf(working_dir);
  }
  RETURN_IF_ERROR(SplitPath(text, request));
  RETURN_IF_ERROR(ChooseFormat(args, request));
  request.overwrite = args.overwrite.value_or(false);
  return request;
}

SaveTargets::SaveTargets(SaveOptions options) : options_(std::move(options)) {
  options_.working_dir = Canonical(options_.working_dir.empty() ? "/" : options_.working_dir);
  options_.roots = AllowedRoots(options_.roots);
  if (!options_.data_dir.empty()) {
    options_.data_dir = Canonical(options_.data_dir);
    data_dir_id_ = IdentityOf(options_.data_dir);
  }
}

std::string SaveTargets::DescribeRoots() const {
  std::string list;
  for (const fs::path& root : options_.roots) list += (list.empty() ? "" : ", ") + root.string();
  return " On this server relative paths start at " + options_.working_dir.string() +
         (list.empty() ? "; no directory is writable (start imgmcp with --allow-write DIR)."
                       : "; writable: " + list + ".");
}

Result<fs::path> SaveTargets::RootOf(const std::vector<std::string>& dir,
                                     const std::string& shown) const {
  if (!options_.data_dir.empty() && StartsWith(dir, ComponentsOf(options_.data_dir))) {
    return Error(ErrorCode::kPermissionDenied,
                 "'save_to' " + shown + " is inside imgmcp's data directory (" +
                     options_.data_dir.string() +
                     "), which only imgmcp writes; choose a path outside it");
  }
  const fs::path* best = nullptr;
  size_t best_depth = 0;
  for (const fs::path& root : options_.roots) {
    const std::vector<std::string> parts = ComponentsOf(root);
    if (StartsWith(dir, parts) && (best == nullptr || parts.size() > best_depth)) {
      best = &root;
      best_depth = parts.size();
    }
  }
  if (best != nullptr) return *best;
  std::string list;
  for (const fs::path& root : options_.roots) list += (list.empty() ? "" : ", ") + root.string();
  return Error(ErrorCode::kPermissionDenied,
               "'save_to' " + shown + " is outside the directories imgmcp may write to (" +
                   (list.empty() ? std::string("none") : list) +
                   "); save below one of them, or start imgmcp with --allow-write DIR");
}

Result<std::optional<SavePlan>> SaveTargets::Plan(const SaveArgs& args, SaveSource source) const {
  if (!args.save_to) return std::optional<SavePlan>();
  ASSIGN_OR_RETURN(SaveRequest request, ParseSaveRequest(args, options_.working_dir));
  if (request.format == imaging::ImageFormat::kGif && source == SaveSource::kNewVersion) {
    // Refused now, not after the commit: a GIF copy is only ever the version's own bytes.
    return InvalidArgument(
        "'save_to' ends in " + fs::path(request.components.back()).extension().string() +
        ", but a new version is never a GIF and imgmcp does not convert to GIF; use "
        ".png, .jpg or .webp (get_image can save a stored GIF version as .gif)");
  }
  SavePlan plan;
  std::vector<std::string> dir = request.components;
  if (!request.directory) {
    plan.name = dir.back();
    dir.pop_back();
  }
  const std::string shown = PathOf(request.components, request.components.size()).string();
  ASSIGN_OR_RETURN(plan.root, RootOf(dir, shown));
  const size_t depth = ComponentsOf(plan.root).size();
  plan.dirs.assign(dir.begin() + static_cast<std::ptrdiff_t>(depth), dir.end());
  plan.format = request.format;
  plan.quality = request.quality;
  plan.overwrite = request.overwrite;
  if (plan.format == imaging::ImageFormat::kWebp && !imaging::CanEncodeWebp()) {
    return Error(ErrorCode::kUnsupported,
                 "'save_to'/'save_format': this build cannot write WebP (no libwebp); use png or "
                 "jpeg");
  }
  RETURN_IF_ERROR(Preflight(plan));
  return std::optional<SavePlan>(std::move(plan));
}

namespace {

// What is at the copy's name, when the copy may be written there (nothing, or a regular file with
// overwrite); otherwise why not.
Result<EntryKind> CheckEntry(int dir, const std::string& name, const fs::path& shown,
                             bool overwrite) {
  ASSIGN_OR_RETURN(EntryKind kind, EntryAt(dir, name, shown));
  switch (kind) {
    case EntryKind::kMissing:
      return kind;
    case EntryKind::kRegular:
      if (overwrite) return kind;
      return Error(ErrorCode::kConflict, shown.string() +
                                             " already exists; pass overwrite: true to replace "
                                             "it, or choose another name");
    case EntryKind::kDirectory:
      return Error(ErrorCode::kFailedPrecondition,
                   shown.string() +
                       " is a directory; end save_to with '/' to save into it under the default "
                       "name");
    case EntryKind::kSymlink:
      return Error(ErrorCode::kPermissionDenied,
                   shown.string() + " is a symbolic link; saving never follows or replaces one");
    case EntryKind::kOther:
      break;
  }
  return Error(ErrorCode::kFailedPrecondition, shown.string() + " is " +
                                                   DescribeNonRegular(dir, name) +
                                                   "; only regular files are written or replaced");
}

fs::path Shown(const SavePlan& plan, const std::string& name) {
  fs::path shown = plan.root;
  for (const std::string& dir : plan.dirs) shown /= dir;
  return name.empty() ? shown : shown / name;
}

}  // namespace

Status SaveTargets::Preflight(const SavePlan& plan) const {
  auto walk = WalkBelowRoot(plan.root, plan.dirs, WalkMode::kCheck, data_dir_id_);
  if (!walk.ok()) return WithContext(walk.error(), "'save_to'");
  if (!walk->complete || plan.name.empty()) return Status::Ok();
  auto entry = CheckEntry(walk->dir.get(), plan.name, Shown(plan, plan.name), plan.overwrite);
  if (!entry.ok()) return WithContext(entry.error(), "'save_to'");
  return Status::Ok();
}

Result<std::string> SaveTargets::Converted(const SavePlan& plan, std::string_view bytes,
                                           imaging::ImageFormat* format) const {
  const imaging::ImageFormat own = imaging::SniffFormat(bytes);
  *format = plan.format.value_or(own);
  if (*format == own && !plan.quality) return std::string(bytes);
  if (*format == imaging::ImageFormat::kGif) {
    return InvalidArgument(
        "imgmcp does not write GIF: a .gif name needs a version that is a GIF already "
        "(this one is " +
        std::string(imaging::MimeTypeOf(own)) + "); use .png, .jpg or .webp");
  }
  ASSIGN_OR_RETURN(imaging::Image image, imaging::Decode(bytes, options_.limits));
  const int quality = plan.quality.value_or(kDefaultSaveQuality);
  switch (*format) {
    case imaging::ImageFormat::kPng:
      return imaging::EncodePng(image);
    case imaging::ImageFormat::kJpeg:
      return imaging::EncodeJpeg(image, quality);
    case imaging::ImageFormat::kWebp:
      return imaging::EncodeWebp(image, quality);
    default:
      break;
  }
  return InvalidArgument("no format to save the copy in");
}

Result<SavedCopy> SaveTargets::Save(const SavePlan& plan, const std::string& session_id,
                                    int64_t version, std::string_view bytes) const {
  SavedCopy saved;
  ASSIGN_OR_RETURN(std::string copy, Converted(plan, bytes, &saved.format));
  const std::string name = plan.name.empty() ? session_id + "-v" + std::to_string(version) +
                                                   imaging::FileExtensionOf(saved.format)
                                             : plan.name;
  saved.path = Shown(plan, name);
  if (options_.pause) options_.pause("before-walk");
  ASSIGN_OR_RETURN(Walk walk, WalkBelowRoot(plan.root, plan.dirs, WalkMode::kCreate, data_dir_id_));
  if (options_.pause) options_.pause("before-write");
  ASSIGN_OR_RETURN(EntryKind before, CheckEntry(walk.dir.get(), name, saved.path, plan.overwrite));
  WriteOptions write;
  write.replace = plan.overwrite;
  write.fail_writes_with = options_.fail_writes_with;
  RETURN_IF_ERROR(WriteFileBelow(walk.dir.get(), name, copy, saved.path, write));
  saved.bytes = static_cast<int64_t>(copy.size());
  saved.replaced = before == EntryKind::kRegular;
  return saved;
}

}  // namespace imgmcp::tools
