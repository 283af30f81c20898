#include "local_backend/local_backend.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "local_backend/colors.h"
#include "local_backend/edit_ops.h"
#include "local_backend/edit_parser.h"
#include "local_backend/generator.h"

namespace imgmcp::local {
namespace {

Status CheckContext(const imaging::CallContext& ctx) {
  if (ctx.cancel.stop_requested())
    return MakeError(ErrorCode::kCancelled, "cancelled by the client");
  if (std::chrono::steady_clock::now() >= ctx.deadline) {
    return MakeError(ErrorCode::kDeadlineExceeded, "deadline passed before the image was made");
  }
  return Status::Ok();
}

Result<imaging::BackendImage> Finish(const imaging::Image& image, std::string text, int level) {
  ASSIGN_OR_RETURN(std::string png, imaging::EncodePng(image, imaging::PngOptions{level}));
  imaging::BackendImage out;
  out.bytes = std::move(png);
  out.mime_type = imaging::MimeTypeOf(imaging::SniffFormat(out.bytes));
  out.text = std::move(text);
  return out;
}

// The mean colour of each reference image joins the generation palette.
Result<std::vector<Rgb>> ReferenceColors(const std::vector<imaging::EncodedImage>& refs,
                                         const imaging::DecodeLimits& limits) {
  std::vector<Rgb> colors;
  for (size_t i = 0; i < refs.size(); ++i) {
    Result<imaging::Image> img = imaging::Decode(refs[i].bytes, limits);
    if (!img.ok()) {
      return WithContext(img.error(), "reference image " + std::to_string(i + 1));
    }
    uint64_t sum[3] = {0, 0, 0};
    const size_t n = img->rgba.size() / 4;
    for (size_t p = 0; p < n; ++p) {
      for (int c = 0; c < 3; ++c) sum[c] += img->rgba[p * 4 + c];
    }
    colors.push_back(Rgb{static_cast<uint8_t>(sum[0] / n), static_cast<uint8_t>(sum[1] / n),
                         static_cast<uint8_t>(sum[2] / n)});
  }
  return colors;
}

}  // namespace

const std::vector<imaging::ModelCapabilities>& LocalBackend::Models() const {
  static const std::vector<imaging::ModelCapabilities> kModels = [] {
    imaging::ModelCapabilities m;
    m.id = kModel;
    m.image_sizes = imaging::ImageSizeNames();
    m.aspect_ratios = imaging::AspectRatioNames();
    m.max_input_images = imaging::kMostInputImages;
    m.thinking = imaging::Support::kIgnored;
    m.thinking_levels = imaging::ThinkingLevelNames();
    m.search = imaging::Support::kIgnored;
    m.chain = imaging::Support::kIgnored;
    return std::vector<imaging::ModelCapabilities>{m};
  }();
  return kModels;
}

Result<imaging::BackendImage> LocalBackend::Generate(const imaging::GenerateRequest& request,
                                                     const imaging::CallContext& ctx) {
  if (Status s = CheckContext(ctx); !s) return s.error();
  const imaging::GenerationOptions& o = request.options;
  const std::string& ratio = o.aspect_ratio;
  ASSIGN_OR_RETURN(imaging::ImageSize size,
                   imaging::PixelSize(o.image_size.empty() ? "1K" : o.image_size,
                                      ratio.empty() ? "1:1" : ratio));
  if (static_cast<int64_t>(size.width) * size.height > options_.limits.max_pixels) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "image_size " + o.image_size + " at " + (ratio.empty() ? "1:1" : ratio) +
                         " is " + std::to_string(size.width) + "x" + std::to_string(size.height) +
                         " pixels, more than the server allows (--max-pixels)");
  }
  ASSIGN_OR_RETURN(std::vector<Rgb> refs, ReferenceColors(request.references, options_.limits));
  ASSIGN_OR_RETURN(GeneratedImage gen,
                   GenerateImage(request.prompt, size.width, size.height, refs));
  if (Status s = CheckContext(ctx); !s) return s.error();
  return Finish(gen.image,
                "local engine: " + std::to_string(size.width) + "x" + std::to_string(size.height) +
                    ", " + gen.description,
                options_.png_compression_level);
}

Status LocalBackend::CheckEditInstruction(const std::string& instruction) const {
  ASSIGN_OR_RETURN(std::vector<EditClause> clauses, ParseEditInstructions(instruction));
  return Status::Ok();
}

Result<imaging::BackendImage> LocalBackend::Edit(const imaging::EditRequest& request,
                                                 const imaging::CallContext& ctx) {
  if (Status s = CheckContext(ctx); !s) return s.error();
  // Parse first: an instruction we do not understand fails before any decoding work.
  ASSIGN_OR_RETURN(std::vector<EditClause> clauses, ParseEditInstructions(request.prompt));
  Result<imaging::Image> image = imaging::Decode(request.base.bytes, options_.limits);
  if (!image.ok()) {
    return WithContext(image.error(), "base image");
  }
  // The text names the first few edits only: it goes back in the result, and an instruction
  // can be 100 KB.
  constexpr size_t kEditsNamed = 8;
  std::string applied;
  for (size_t i = 0; i < clauses.size(); ++i) {
    const EditClause& clause = (clauses)[i];
    if (Status s = CheckContext(ctx); !s) return s.error();
    if (Status s = ApplyEdit(*image, clause.op, options_.limits); !s) {
      return WithContext(s.error(), "\"" + clause.source + "\"");
    }
    if (i < kEditsNamed) applied += (applied.empty() ? "" : "; ") + clause.source;
  }
  if (clauses.size() > kEditsNamed) {
    applied += "; … (" + std::to_string(clauses.size()) + " edits in all)";
  }
  if (!request.options.image_size.empty()) {
    ASSIGN_OR_RETURN(
        imaging::ImageSize size,
        imaging::ScaleToImageSize(image->width, image->height, request.options.image_size));
    if (size.width != image->width || size.height != image->height) {
      if (static_cast<int64_t>(size.width) * size.height > options_.limits.max_pixels) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "image_size " + request.options.image_size + " would make " +
                             std::to_string(size.width) + "x" + std::to_string(size.height) +
                             " pixels, more than the server allows (--max-pixels)");
      }
      ASSIGN_OR_RETURN(imaging::Image scaled, imaging::Resize(*image, size.width, size.height));
      *image = std::move(scaled);
      applied += "; scaled to image_size " + request.options.image_size;
    }
  }
  return Finish(*image,
                "local engine: applied " + applied + " -> " + std::to_string(image->width) + "x" +
                    std::to_string(image->height),
                options_.png_compression_level);
}

// --- Memory ------------------------------------------------------------------------------------

namespace {

size_t FrameBytes(imaging::ImageSize size) {
  return static_cast<size_t>(std::max(size.width, 0)) *
         static_cast<size_t>(std::max(size.height, 0)) * 4;
}

// What EncodePng reserves for a frame of `size`: zlib's bound on its rows (4 bytes a pixel at
// most, and a filter byte a row), with room for the chunks around them.
size_t PngBytes(imaging::ImageSize size) {
  const size_t raw = FrameBytes(size) + static_cast<size_t>(std::max(size.height, 0));
  return raw + raw / 1024 + 4096;
}

// The frame an edit operation makes beside the one it is given (`in`), or nullopt when it works
// in place (or is refused: a resize over the pixel limit).
struct NewFrame {
  imaging::ImageSize in;
  int64_t max_pixels;

  std::optional<imaging::ImageSize> operator()(const RotateOp& op) const {
    if (op.degrees == 0) return std::nullopt;
    return op.degrees == 180 ? in : imaging::ImageSize{in.height, in.width};
  }
  std::optional<imaging::ImageSize> operator()(const BlurOp&) const { return in; }
  std::optional<imaging::ImageSize> operator()(const SharpenOp&) const { return in; }
  std::optional<imaging::ImageSize> operator()(const CropOp& op) const {
    return imaging::ImageSize{std::min(op.width, in.width), std::min(op.height, in.height)};
  }
  std::optional<imaging::ImageSize> operator()(const ResizeOp& op) const {
    int64_t w = op.width, h = op.height;
    if (op.percent > 0) {
      w = std::max<int64_t>(1, (static_cast<int64_t>(in.width) * op.percent + 50) / 100);
      h = std::max<int64_t>(1, (static_cast<int64_t>(in.height) * op.percent + 50) / 100);
    }
    if (w * h > max_pixels || (w == in.width && h == in.height)) return std::nullopt;
    return imaging::ImageSize{static_cast<int>(w), static_cast<int>(h)};
  }
  template <typename Op>
  std::optional<imaging::ImageSize> operator()(const Op&) const {
    return std::nullopt;
  }
};

// A call that ends by writing the PNG of a `last` frame, having held `peak` before.
imaging::WorkMemory EndsWithPng(size_t peak, imaging::ImageSize last) {
  imaging::WorkMemory memory;
  memory.output = last;
  memory.answer = PngBytes(last);
  memory.peak = std::max(peak, FrameBytes(last) + memory.answer);
  return memory;
}

}  // namespace

std::optional<imaging::WorkMemory> LocalBackend::GenerateMemory(
    const imaging::GenerationOptions& options,
    const std::vector<imaging::ImageSize>& references) const {
  size_t peak = 0;
  for (const imaging::ImageSize& reference : references)
    peak = std::max(peak, 2 * FrameBytes(reference));
  const std::string& ratio = options.aspect_ratio;
  Result<imaging::ImageSize> size = imaging::PixelSize(
      options.image_size.empty() ? "1K" : options.image_size, ratio.empty() ? "1:1" : ratio);
  // A size the call will refuse makes nothing.
  imaging::ImageSize out;
  if (size.ok() && static_cast<int64_t>(size->width) * size->height <= options_.limits.max_pixels) {
    out = *size;
  }
  return EndsWithPng(peak, out);
}

std::optional<imaging::WorkMemory> LocalBackend::EditMemory(
    const std::string& instruction, imaging::ImageSize base,
    const imaging::GenerationOptions& options) const {
  imaging::ImageSize at = base;
  size_t peak = 2 * FrameBytes(base);  // decoding it
  auto step = [&](imaging::ImageSize next) {
    peak = std::max(peak, FrameBytes(at) + FrameBytes(next));
    at = next;
  };
  if (Result<std::vector<EditClause>> clauses = ParseEditInstructions(instruction); clauses.ok()) {
    for (const EditClause& clause : *clauses) {
      const std::optional<imaging::ImageSize> next =
          std::visit(NewFrame{at, options_.limits.max_pixels}, clause.op);
      if (next) step(*next);
    }
  }
  if (!options.image_size.empty()) {
    Result<imaging::ImageSize> size =
        imaging::ScaleToImageSize(at.width, at.height, options.image_size);
    if (size.ok() && (size->width != at.width || size->height != at.height) &&
        static_cast<int64_t>(size->width) * size->height <= options_.limits.max_pixels) {
      step(*size);
    }
  }
  return EndsWithPng(peak, at);
}

}  // namespace imgmcp::local
