// Turns an image argument ({path} or {data, mime_type}) into checked bytes. Paths must resolve
// (symlinks included) inside an allowed root; the MIME type always comes from the bytes.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/result.h"
#include "imaging/codec.h"
#include "imaging/image_backend.h"

namespace imgmcp::tools {

struct ImageInputOptions {
  std::vector<std::filesystem::path> allowed_roots;  // canonicalised by the constructor
  imaging::DecodeLimits limits;
  size_t max_reference_images = 14;
};

class ImageInputResolver {
 public:
  explicit ImageInputResolver(ImageInputOptions options);

  // `field` names the argument in errors, e.g. "image" or "reference_images[2]".
  Result<imaging::EncodedImage> Resolve(const Json& value, const std::string& field) const;
  // An optional array of image arguments; nullptr → empty.
  Result<std::vector<imaging::EncodedImage>> ResolveList(const Json* value,
                                                         const std::string& field) const;

  const std::vector<std::filesystem::path>& allowed_roots() const { return options_.allowed_roots; }

 private:
  Result<std::string> ReadAllowedFile(const std::string& path, const std::string& field) const;
  Result<imaging::EncodedImage> CheckImage(std::string bytes, const std::string& field) const;

  ImageInputOptions options_;
};

}  // namespace imgmcp::tools
