#include "server/tools/image_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "common/ascii.h"
#include "common/base64.h"
#include "common/posix_io.h"
#include "common/unique_fd.h"
#include "server/tools/arguments.h"
#include "server/tools/rooted_write.h"

namespace imgmcp::tools {
namespace {

namespace fs = std::filesystem;

bool IsInside(const fs::path& path, const fs::path& root) {
  const std::string p = path.string();
  std::string r = root.string();
  if (p == r) return true;
  if (r.empty() || r.back() != '/') r += '/';
  return p.compare(0, r.size(), r) == 0;
}

// "data:…" (case-insensitive scheme): the type is in the URL, the base64 after its comma.
bool IsDataUrl(std::string_view text) { return StartsWithIgnoreAsciiCase(text, "data:"); }

}  // namespace

const std::vector<std::string>& AcceptedImageMimeTypes() {
  static const std::vector<std::string> kTypes = {"image/png", "image/jpeg", "image/webp",
                                                  "image/gif"};
  return kTypes;
}

Status ImageInputArg::Check(const std::string& where) const {
  if (path.has_value() == data.has_value()) {
    return InvalidArgument("'" + where +
                           "' needs exactly one of {\"path\": \"...\"} or {\"data\": \"<base64>\", "
                           "\"mime_type\": \"image/png\"}");
  }
  if (path.has_value() && mime_type.has_value()) {
    return InvalidArgument("'" + where + ".mime_type' goes with 'data', not with 'path'");
  }
  if (data.has_value() && !mime_type.has_value() && !IsDataUrl(*data)) {
    return InvalidArgument("'" + where +
                           ".mime_type' is required with 'data' (image/png, image/jpeg, "
                           "image/webp or image/gif), unless 'data' is a data: URL");
  }
  return Status::Ok();
}

void ImageInputResolver::ApplyLimits(ArgumentOptions& options) const {
  // Base64 of the largest image, plus line breaks every 76 characters and a data: URL prefix.
  const size_t base64 = static_cast<size_t>(options_.limits.max_bytes) / 3 * 4 + 8;
  options.max_image_data_chars = base64 + base64 / 38 + 256;
  options.max_reference_images = options_.max_reference_images;
}

ImageInputResolver::ImageInputResolver(ImageInputOptions options) : options_(std::move(options)) {
  options_.allowed_roots = AllowedRoots(options_.allowed_roots, &root_left_out_);
}

namespace {

// The real path of `path` (`field` in errors), when it is inside one of `roots`; a refusal says
// that / is never a root when `root_left_out` (a server started in /).
Result<fs::path> AllowedRealPath(const std::string& path, const std::string& field,
                                 const std::vector<fs::path>& roots, bool root_left_out) {
  if (path.empty()) return InvalidArgument("'" + field + ".path' is empty");
  if (path.find('\0') != std::string::npos) {
    return InvalidArgument("'" + field + ".path' contains a NUL byte");
  }
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      return Error(ErrorCode::kNotFound, "'" + field + ".path': no such file: " + path);
    }
    return InvalidArgument("'" + field + ".path': cannot resolve " + path + ": " + ErrnoText(err));
  }
  fs::path real(resolved);
  bool allowed = false;
  for (const auto& root : roots) allowed = allowed || IsInside(real, root);
  if (!allowed) {
    std::string list;
    for (const auto& root : roots) list += (list.empty() ? "" : ", ") + root.string();
    if (root_left_out) list += (list.empty() ? "none; " : "; ") + std::string("/ is never one");
    return Error(ErrorCode::kPermissionDenied,
                 "'" + field + ".path' " + path + " resolves to " + real.string() +
                     ", which is outside the allowed directories (" + list +
                     "); start imgmcp with --allow-read DIR to allow another directory, or pass "
                     "the image as {data, mime_type}");
  }
  return real;
}

// The bytes of `real`, a regular file of at most `limits.max_bytes`; `path` is what the caller
// gave, for errors.
Result<std::string> ReadRegularFile(const fs::path& real, const std::string& path,
                                    const std::string& field, const imaging::DecodeLimits& limits) {
  // O_NONBLOCK: opening a FIFO (or a device) must not wait for a writer; anything but a regular
  // file is refused right after, by fstat on what was actually opened.
  const UniqueFd fd(::open(real.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd.valid()) {
    return InvalidArgument("'" + field + ".path': cannot open " + path + ": " + ErrnoText(errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return InvalidArgument("'" + field + ".path' " + path +
                           " is not a regular file (only image files "
                           "are read, never FIFOs, devices or directories)");
  }
  if (st.st_size > limits.max_bytes) {
    return Error(ErrorCode::kTooLarge, "'" + field + ".path' " + path + " is " +
                                           std::to_string(st.st_size) + " bytes; the limit is " +
                                           std::to_string(limits.max_bytes));
  }
  std::string bytes;
  bytes.reserve(static_cast<size_t>(st.st_size));
  if (const int err = ReadAll(fd.get(), &bytes, static_cast<size_t>(st.st_size)); err != 0) {
    return InvalidArgument("'" + field + ".path': cannot read " + path + ": " + ErrnoText(err));
  }
  return bytes;
}

}  // namespace

Result<std::string> ImageInputResolver::ReadAllowedFile(const std::string& path,
                                                        const std::string& field) const {
  ASSIGN_OR_RETURN(fs::path real,
                   AllowedRealPath(path, field, options_.allowed_roots, root_left_out_));
  return ReadRegularFile(real, path, field, options_.limits);
}

size_t ImageInputResolver::EncodedSize(const ImageInputArg& input) const {
  if (input.data) return input.data->size() / 4 * 3;
  if (!input.path) return 0;
  auto real = AllowedRealPath(*input.path, "path", options_.allowed_roots, root_left_out_);
  if (!real.ok()) return 0;
  std::error_code error;
  const auto size = fs::file_size(*real, error);
  return error ? 0 : static_cast<size_t>(size);
}

Result<imaging::EncodedImage> ImageInputResolver::CheckImage(std::string bytes,
                                                             const std::string& field) const {
  auto info = imaging::ReadImageInfo(bytes, options_.limits);
  if (!info.ok()) return WithContext(info.error(), "'" + field + "'");
  // The header can be fine while the pixels are cut off or corrupt (a file copied halfway): decode
  // it all now, so such an image is refused before anything is committed or sent to a backend.
  // The limits were checked on the header above, so this cannot allocate more than they allow.
  if (auto decoded = imaging::Decode(bytes, options_.limits); !decoded.ok()) {
    return Error(ErrorCode::kInvalidArgument,
                 "'" + field + "': the " + std::string(imaging::MimeTypeOf(info->format)) +
                     " image cannot be decoded (" + decoded.error().message +
                     "); is the file complete?");
  }
  imaging::EncodedImage image;
  image.mime_type = imaging::MimeTypeOf(info->format);
  image.bytes = std::move(bytes);
  return image;
}

Result<imaging::EncodedImage> ImageInputResolver::Resolve(const ImageInputArg& input,
                                                          const std::string& field) const {
  if (input.path.has_value()) {
    ASSIGN_OR_RETURN(std::string bytes, ReadAllowedFile(*input.path, field));
    return CheckImage(std::move(bytes), field);
  }
  if (!input.data.has_value()) {  // ImageInputArg::Check refuses this; kept for direct callers
    return InvalidArgument("'" + field + "' has neither 'path' nor 'data'");
  }
  // What agents paste: a data URL ("data:image/png;base64,iVBOR…") and base64 wrapped at 76
  // columns. The prefix and the line breaks are dropped; the bytes still decide the type.
  std::string_view text = *input.data;
  if (IsDataUrl(text)) {
    const size_t comma = text.find(',');
    const std::string_view header = text.substr(0, comma);
    if (comma == std::string_view::npos || header.size() < 7 ||
        header.substr(header.size() - 7) != ";base64") {
      return InvalidArgument("'" + field +
                             ".data' is a data URL that is not base64; send "
                             "\"data:image/png;base64,<base64>\" or the base64 alone");
    }
    text.remove_prefix(comma + 1);
  }
  std::string compact;
  if (text.find_first_of(" \t\r\n") != std::string_view::npos) {
    compact.reserve(text.size());
    for (char c : text) {
      if (c != ' ' && c != '\t' && c != '\r' && c != '\n') compact.push_back(c);
    }
    text = compact;
  }
  auto bytes = Base64Decode(text);
  if (!bytes.ok()) return WithContext(bytes.error(), "'" + field + ".data'");
  if (bytes->empty()) return InvalidArgument("'" + field + ".data' is empty");
  // The label is checked for form only; the bytes decide the type.
  return CheckImage(std::move(*bytes), field);
}

Result<std::vector<imaging::EncodedImage>> ImageInputResolver::ResolveList(
    const std::vector<ImageInputArg>& inputs, const std::string& field) const {
  std::vector<imaging::EncodedImage> images;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSIGN_OR_RETURN(imaging::EncodedImage image,
                     Resolve(inputs[i], field + "[" + std::to_string(i) + "]"));
    images.push_back(std::move(image));
  }
  return images;
}

}  // namespace imgmcp::tools
