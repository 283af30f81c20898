// LocalBackend: the deterministic offline engine (docs/local-backend.md). Generation draws a
// picture from the prompt; edits follow a small documented vocabulary (docs/local-backend.md).
// Output is PNG. Same request -> same bytes. Stateless and safe to call from several threads at
// once. Generation makes PixelSize(image_size, aspect_ratio) pixels (1K and 1:1 by default); an
// edit given an image_size is scaled, aspect kept, to about that size's pixel count.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "imaging/codec.h"
#include "imaging/image_backend.h"

namespace imgmcp::local {

struct LocalBackendOptions {
  imaging::DecodeLimits limits;   // for base and reference images, and resize targets
  int png_compression_level = 4;  // see PngOptions
};

class LocalBackend final : public imaging::ImageBackend {
 public:
  static constexpr char kModel[] = "imgmcp-local-1";

  LocalBackend() = default;
  explicit LocalBackend(LocalBackendOptions options) : options_(options) {}

  std::string Name() const override { return "local"; }
  std::string Model() const override { return kModel; }
  // One model: every image_size and aspect ratio; thinking, search and context chain are
  // accepted and ignored (they have no offline meaning).
  const std::vector<imaging::ModelCapabilities>& Models() const override;
  Result<imaging::BackendImage> Generate(const imaging::GenerateRequest& request,
                                         const imaging::CallContext& ctx) override;
  Result<imaging::BackendImage> Edit(const imaging::EditRequest& request,
                                     const imaging::CallContext& ctx) override;
  // The instruction must parse in the edit vocabulary (docs/local-backend.md).
  Status CheckEditInstruction(const std::string& instruction) const override;

  // The memory estimate of the engine, in one place (local_backend.cpp, "Memory"): what a
  // Generate or an Edit holds at its peak. Each frame is 4 bytes a pixel; decoding an image holds
  // two (the decoder's and the copy it hands over); an operation that makes a new frame (rotate,
  // crop, resize, blur, sharpen, the scaling to image_size) holds the old and the new one; the
  // PNG written at the end reserves zlib's bound, about one more frame, and stays as the answer.
  // Generate: `references` are the sizes of the reference images, decoded one at a time.
  std::optional<imaging::WorkMemory> GenerateMemory(
      const imaging::GenerationOptions& options,
      const std::vector<imaging::ImageSize>& references) const override;
  // Edit of a `base` image of that size: `instruction`'s operations followed from size to size
  // (one that does not parse counts as none: the edit is refused before it runs), then the
  // scaling to options.image_size.
  std::optional<imaging::WorkMemory> EditMemory(
      const std::string& instruction, imaging::ImageSize base,
      const imaging::GenerationOptions& options) const override;

 private:
  LocalBackendOptions options_;
};

}  // namespace imgmcp::local
