// LocalBackend: the deterministic offline engine (docs/local-backend.md). Generation draws a picture from
// the prompt; edits follow a small documented vocabulary (docs/local-backend.md). Output is PNG.
// Same request -> same bytes. Stateless and safe to call from several threads at once.
// Generation makes PixelSize(image_size, aspect_ratio) pixels (1K and 1:1 by default); an edit
// given an image_size is scaled, aspect kept, to about that size's pixel count.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "imaging/codec.h"
#include "imaging/image_backend.h"

namespace imgmcp::imaging {

struct LocalBackendOptions {
  DecodeLimits limits;            // for base and reference images, and resize targets
  int png_compression_level = 4;  // see PngOptions
};

// What one backend call holds in this process, for the lease the tools take on --max-inflight-mb
// before it runs (docs/design.md §6). The encoded inputs are not in it: the tools count those.
struct WorkMemory {
  size_t peak = 0;    // bytes held at once while the backend works, the answer it makes included
  size_t answer = 0;  // the answer's bytes, which the call holds after the backend has returned
  ImageSize output;   // the answer's size in pixels
};

class LocalBackend final : public ImageBackend {
 public:
  static constexpr char kModel[] = "imgmcp-local-1";

  LocalBackend() = default;
  explicit LocalBackend(LocalBackendOptions options) : options_(options) {}

  std::string Name() const override { return "local"; }
  std::string Model() const override { return kModel; }
  // One model: every image_size and aspect ratio; thinking, search and context chain are
  // accepted and ignored (they have no offline meaning).
  const std::vector<ModelCapabilities>& Models() const override;
  Result<BackendImage> Generate(const GenerateRequest& request, const CallContext& ctx) override;
  Result<BackendImage> Edit(const EditRequest& request, const CallContext& ctx) override;
  // The instruction must parse in the edit vocabulary (docs/local-backend.md).
  Status CheckEditInstruction(const std::string& instruction) const override;

  // The memory estimate of the engine, in one place (local_backend.cpp, "Memory"): what a
  // Generate or an Edit holds at its peak. Each frame is 4 bytes a pixel; decoding an image holds
  // two (the decoder's and the copy it hands over); an operation that makes a new frame (rotate,
  // crop, resize, blur, sharpen, the scaling to image_size) holds the old and the new one; the
  // PNG written at the end reserves zlib's bound, about one more frame, and stays as the answer.
  // Generate: `references` are the sizes of the reference images, decoded one at a time.
  WorkMemory GenerateMemory(const GenerationOptions& options,
                            const std::vector<ImageSize>& references) const;
  // Edit of a `base` image of that size: `instruction`'s operations followed from size to size
  // (one that does not parse counts as none: the edit is refused before it runs), then the
  // scaling to options.image_size.
  WorkMemory EditMemory(const std::string& instruction, ImageSize base,
                        const GenerationOptions& options) const;

 private:
  LocalBackendOptions options_;
};

}  // namespace imgmcp::imaging
