// The image argument ({path} or {data, mime_type}): its typed form and schema (ImageInputArg), and
// the resolver that turns it into checked bytes. Paths must resolve (symlinks included) inside an
// allowed root (never /: rooted_write.h's AllowedRoots, the rule save_to's writes follow too);
// the MIME type always comes from the bytes.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/result.h"
#include "imaging/codec.h"
#include "imaging/image_backend.h"
#include "server/tools/arguments.h"

namespace imgmcp::tools {

// The MIME labels an inline image may carry ({data, mime_type}).
const std::vector<std::string>& AcceptedImageMimeTypes();

// {"path": …} or {"data": <base64>, "mime_type": …}, exactly one of path and data.
struct ImageInputArg {
  std::optional<std::string> path;
  std::optional<std::string> data;
  std::optional<std::string> mime_type;

  template <typename V>
  void Fields(V& v) {
    v.String("path", path, 4096,
             "Path of an image file on the server's machine, inside an allowed directory.");
    v.String("data", data, v.options().max_image_data_chars,
             "The image bytes, base64-encoded (line breaks and a data: URL prefix are fine).");
    v.Enum("mime_type", mime_type, AcceptedImageMimeTypes(),
           "Required with data unless data is a data: URL. The real type is read from the "
           "bytes.");
  }
  // `where` names the argument, e.g. "image" or "reference_images[2]".
  Status Check(const std::string& where) const;
};

struct ImageInputOptions {
  // The working dir, the data dir and --allow-read dirs; the constructor keeps AllowedRoots of
  // them (canonical, existing directories, never /).
  std::vector<std::filesystem::path> allowed_roots;
  imaging::DecodeLimits limits;
  size_t max_reference_images = 14;
};

class ImageInputResolver {
 public:
  explicit ImageInputResolver(ImageInputOptions options);

  // `field` names the argument in errors, e.g. "image" or "reference_images[2]".
  Result<imaging::EncodedImage> Resolve(const ImageInputArg& input, const std::string& field) const;
  // Each of `inputs`, named field[0], field[1], … in errors.
  Result<std::vector<imaging::EncodedImage>> ResolveList(const std::vector<ImageInputArg>& inputs,
                                                         const std::string& field) const;

  // About what `input` weighs once read: its base64 data decoded, or the size of its file when
  // the path is allowed (0 otherwise, and when it cannot be read: Resolve reports why).
  size_t EncodedSize(const ImageInputArg& input) const;
  // The parsing limits these options imply (inline data size, number of reference images).
  void ApplyLimits(ArgumentOptions& options) const;

  const std::vector<std::filesystem::path>& allowed_roots() const { return options_.allowed_roots; }

 private:
  Result<std::string> ReadAllowedFile(const std::string& path, const std::string& field) const;
  Result<imaging::EncodedImage> CheckImage(std::string bytes, const std::string& field) const;

  ImageInputOptions options_;
  bool root_left_out_ = false;  // / was among the roots given, and left out (said in refusals)
};

}  // namespace imgmcp::tools
