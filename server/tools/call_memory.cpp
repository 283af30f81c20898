#include "server/tools/call_memory.h"

#include <algorithm>
#include <optional>

namespace imgmcp::tools {
namespace {

size_t Pixels(imaging::ImageSize size) {
  return static_cast<size_t>(std::max(size.width, 0)) *
         static_cast<size_t>(std::max(size.height, 0));
}

size_t Base64Bytes(size_t bytes) { return (bytes + 2) / 3 * 4; }

// Around the image's base64 in an answer body: the JSON, the model's text, thought signatures.
constexpr size_t kAnswerEnvelope = 256u << 10;

// " (making a 4096x4096 image)", for what a message about a call's memory says of the call.
std::string Making(imaging::ImageSize size) {
  if (size.width <= 0 || size.height <= 0) return "";
  return " (making a " + std::to_string(size.width) + "x" + std::to_string(size.height) + " image)";
}

// The remote answer to a call making an image of `size` ("" = 1K) from `base`'s aspect ratio
// (an edit), or of `aspect_ratio` ("" = 1:1) when there is no base.
imaging::ImageSize RemoteOutput(const std::string& image_size, const std::string& aspect_ratio,
                                std::optional<imaging::ImageSize> base) {
  const std::string size = image_size.empty() ? "1K" : image_size;
  Result<imaging::ImageSize> out =
      base ? imaging::ScaleToImageSize(base->width, base->height, size)
           : imaging::PixelSize(size, aspect_ratio.empty() ? "1:1" : aspect_ratio);
  return out.ok() ? *out : imaging::ImageSize{};
}

}  // namespace

size_t EncodedBytes(size_t encoded) { return encoded + Base64Bytes(encoded); }

imaging::WorkMemory RemoteAnswerMemory(imaging::ImageSize output,
                                       const imaging::DecodeLimits& limits) {
  imaging::WorkMemory memory;
  memory.output = output;
  memory.answer = std::min<size_t>(Pixels(output) * 3,
                                   static_cast<size_t>(std::max<int64_t>(limits.max_bytes, 0)));
  const size_t body = Base64Bytes(memory.answer) + kAnswerEnvelope;
  memory.peak = 2 * body + memory.answer;
  return memory;
}

size_t WorkBytes(const imaging::WorkMemory& work, InlineMode mode) {
  size_t block = 0;
  if (mode == InlineMode::kPreview) block = Pixels(work.output) * 4;
  if (mode == InlineMode::kFull) block = Base64Bytes(work.answer);
  return std::max(work.peak, work.answer + block);
}

MemoryLeases::MemoryLeases(size_t max_bytes, const imaging::ImageBackend& backend,
                           const ImageInputResolver& inputs, const imaging::DecodeLimits& limits,
                           int chain_turns)
    : budget_(max_bytes, "--max-inflight-mb"),
      backend_(backend),
      inputs_(inputs),
      limits_(limits),
      chain_turns_(chain_turns) {}

Result<ByteBudget::Lease> MemoryLeases::Lease(const std::string& what,
                                              const std::vector<const ImageInputArg*>& inputs,
                                              size_t work) {
  size_t encoded = 0;
  for (const ImageInputArg* input : inputs) encoded += inputs_.EncodedSize(*input);
  return budget_.Acquire(EncodedBytes(encoded) + work, what);
}

imaging::WorkMemory MemoryLeases::GenerateWork(
    const imaging::GenerationOptions& options,
    const std::vector<imaging::EncodedImage>& references) const {
  std::vector<imaging::ImageSize> sizes;
  for (const imaging::EncodedImage& reference : references) {
    // One that cannot be read is refused by the backend before it decodes anything.
    if (auto info = imaging::ReadImageInfo(reference.bytes, limits_); info.ok()) {
      sizes.push_back({info->width, info->height});
    }
  }
  if (auto here = backend_.GenerateMemory(options, sizes)) return *here;
  return RemoteAnswerMemory(RemoteOutput(options.image_size, options.aspect_ratio, std::nullopt),
                            limits_);
}

imaging::WorkMemory MemoryLeases::EditWork(const std::string& instruction, imaging::ImageSize base,
                                           const imaging::GenerationOptions& options) const {
  if (auto here = backend_.EditMemory(instruction, base, options)) return *here;
  return RemoteAnswerMemory(RemoteOutput(options.image_size, "", base), limits_);
}

Result<ByteBudget::Lease> MemoryLeases::LeaseGeneration(
    const GenerateImageArgs& args, const imaging::GenerationOptions& options,
    std::vector<imaging::EncodedImage>* references) {
  std::vector<const ImageInputArg*> inputs;
  for (const ImageInputArg& reference : args.reference_images) inputs.push_back(&reference);
  const imaging::WorkMemory work = GenerateWork(options, {});
  const std::string what = "this generate_image call" + Making(work.output);
  const size_t bytes = WorkBytes(work, args.inline_mode);
  ASSIGN_OR_RETURN(ByteBudget::Lease lease, Lease(what, inputs, bytes));
  ASSIGN_OR_RETURN(*references, inputs_.ResolveList(args.reference_images, "reference_images"));
  // The local engine decodes each reference: one larger than the image made needs more.
  const size_t with_references = WorkBytes(GenerateWork(options, *references), args.inline_mode);
  if (with_references > bytes) RETURN_IF_ERROR(lease.Extend(with_references - bytes, what));
  return lease;
}

Status MemoryLeases::ExtendForEdit(ByteBudget::Lease& lease, const EditImageArgs& args,
                                   imaging::ImageSize base, size_t stored_bytes,
                                   const imaging::GenerationOptions& options) const {
  const size_t turns = args.chain() ? static_cast<size_t>(chain_turns_) : 0;
  // A replayed turn sends its answer and, for an import, the image the user gave: each about
  // the size of the base.
  const imaging::WorkMemory work = EditWork(args.prompt, base, options);
  return lease.Extend(
      EncodedBytes(stored_bytes * (1 + 2 * turns)) + WorkBytes(work, args.inline_mode),
      "this edit_image call" + Making(work.output));
}

}  // namespace imgmcp::tools
