#include "imaging/local_backend.h"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "imaging/colors.h"
#include "imaging/edit_ops.h"
#include "imaging/edit_parser.h"
#include "imaging/generator.h"

namespace imgmcp::imaging {
namespace {

Status CheckContext(const CallContext& ctx) {
  if (ctx.cancel.stop_requested())
    return MakeError(ErrorCode::kCancelled, "cancelled by the client");
  if (std::chrono::steady_clock::now() >= ctx.deadline) {
    return MakeError(ErrorCode::kDeadlineExceeded, "deadline passed before the image was made");
  }
  return Status::Ok();
}

Result<BackendImage> Finish(const Image& image, std::string text, int level) {
  ASSIGN_OR_RETURN(std::string png, EncodePng(image, PngOptions{level}));
  BackendImage out;
  out.bytes = std::move(png);
  out.mime_type = MimeTypeOf(SniffFormat(out.bytes));
  out.text = std::move(text);
  return out;
}

// The mean colour of each reference image joins the generation palette.
Result<std::vector<Rgb>> ReferenceColors(const std::vector<EncodedImage>& refs,
                                         const DecodeLimits& limits) {
  std::vector<Rgb> colors;
  for (size_t i = 0; i < refs.size(); ++i) {
    Result<Image> img = Decode(refs[i].bytes, limits);
    if (!img.ok()) {
      return MakeError(img.error().code,
                       "reference image " + std::to_string(i + 1) + ": " + img.error().message);
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

const std::vector<ModelCapabilities>& LocalBackend::Models() const {
  static const std::vector<ModelCapabilities> kModels = [] {
    ModelCapabilities m;
    m.id = kModel;
    m.image_sizes = ImageSizeNames();
    m.aspect_ratios = AspectRatioNames();
    m.max_input_images = kMostInputImages;
    m.thinking = Support::kIgnored;
    m.search = Support::kIgnored;
    m.chain = Support::kIgnored;
    return std::vector<ModelCapabilities>{m};
  }();
  return kModels;
}

Result<BackendImage> LocalBackend::Generate(const GenerateRequest& request,
                                            const CallContext& ctx) {
  if (Status s = CheckContext(ctx); !s) return s.error();
  const GenerationOptions& o = request.options;
  const std::string& ratio = o.aspect_ratio;
  ASSIGN_OR_RETURN(ImageSize size, PixelSize(o.image_size.empty() ? "1K" : o.image_size,
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

Result<BackendImage> LocalBackend::Edit(const EditRequest& request, const CallContext& ctx) {
  if (Status s = CheckContext(ctx); !s) return s.error();
  // Parse first: an instruction we do not understand fails before any decoding work.
  ASSIGN_OR_RETURN(std::vector<EditClause> clauses, ParseEditInstructions(request.prompt));
  Result<Image> image = Decode(request.base.bytes, options_.limits);
  if (!image.ok()) {
    return MakeError(image.error().code, "base image: " + image.error().message);
  }
  // The text names the first few edits only: it goes back in the result, and an instruction
  // can be 100 KB.
  constexpr size_t kEditsNamed = 8;
  std::string applied;
  for (size_t i = 0; i < clauses.size(); ++i) {
    const EditClause& clause = (clauses)[i];
    if (Status s = CheckContext(ctx); !s) return s.error();
    if (Status s = ApplyEdit(*image, clause.op, options_.limits); !s) {
      return MakeError(s.error().code, "\"" + clause.source + "\": " + s.error().message);
    }
    if (i < kEditsNamed) applied += (applied.empty() ? "" : "; ") + clause.source;
  }
  if (clauses.size() > kEditsNamed) {
    applied += "; … (" + std::to_string(clauses.size()) + " edits in all)";
  }
  if (!request.options.image_size.empty()) {
    ASSIGN_OR_RETURN(ImageSize size,
                     ScaleToImageSize(image->width, image->height, request.options.image_size));
    if (size.width != image->width || size.height != image->height) {
      if (static_cast<int64_t>(size.width) * size.height > options_.limits.max_pixels) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "image_size " + request.options.image_size + " would make " +
                             std::to_string(size.width) + "x" + std::to_string(size.height) +
                             " pixels, more than the server allows (--max-pixels)");
      }
      ASSIGN_OR_RETURN(Image scaled, Resize(*image, size.width, size.height));
      *image = std::move(scaled);
      applied += "; scaled to image_size " + request.options.image_size;
    }
  }
  return Finish(*image,
                "local engine: applied " + applied + " -> " + std::to_string(image->width) + "x" +
                    std::to_string(image->height),
                options_.png_compression_level);
}

}  // namespace imgmcp::imaging
