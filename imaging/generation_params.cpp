#include "imaging/generation_params.h"

#include <algorithm>
#include <cmath>

namespace imgmcp::imaging {
namespace {

struct RatioSize {
  std::string_view ratio;
  int width;
  int height;
};

// Gemini's 1K table (2.5 Flash Image's published sizes), then 3.1 Flash Image's extreme ratios
// at about 1 MP. The order is AspectRatioNames()'s.
constexpr RatioSize k1KSizes[] = {
    {"1:1", 1024, 1024}, {"2:3", 832, 1248},  {"3:2", 1248, 832}, {"3:4", 864, 1184},
    {"4:3", 1184, 864},  {"4:5", 896, 1152},  {"5:4", 1152, 896}, {"9:16", 768, 1344},
    {"16:9", 1344, 768}, {"21:9", 1536, 672}, {"1:4", 512, 2048}, {"4:1", 2048, 512},
    {"1:8", 384, 3072},  {"8:1", 3072, 384},
};
constexpr size_t kStandardRatioCount = 10;

// Width and height of the 1K size are multiplied by num/den: 512 → 1/2, 2K → 2, 4K → 4.
struct SizeScale {
  std::string_view name;
  int num;
  int den;
};
constexpr SizeScale kScales[] = {{"512", 1, 2}, {"1K", 1, 1}, {"2K", 2, 1}, {"4K", 4, 1}};

const SizeScale* FindScale(std::string_view image_size) {
  for (const SizeScale& s : kScales) {
    if (s.name == image_size) return &s;
  }
  return nullptr;
}

bool Contains(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::string Quoted(std::string_view s) {
  std::string cut(s.substr(0, 40));
  return "\"" + cut + (s.size() > 40 ? "…" : "") + "\"";
}

std::string Spaced(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : " ") + s;
  return out;
}

// ", offered by: a, b" for the models in `models` that `has`; "" when none.
template <typename Pred>
std::string OfferedBy(const std::vector<ModelCapabilities>& models, Pred has) {
  std::vector<std::string> ids;
  for (const ModelCapabilities& m : models) {
    if (has(m)) ids.push_back(m.id);
  }
  return ids.empty() ? "" : " (offered by " + JoinList(ids, " and ") + ")";
}

// `thinking` (not empty) against the vocabulary and the row `m` of `models`.
Status CheckThinking(const std::vector<ModelCapabilities>& models, const ModelCapabilities& m,
                     const std::string& thinking) {
  if (!Contains(ThinkingLevelNames(), thinking)) {
    return InvalidArgument("thinking " + Quoted(thinking) + " is not one of " +
                           JoinList(ThinkingLevelNames(), ", "));
  }
  if (m.thinking == Support::kNo) {
    return InvalidArgument(
        "model " + m.id + " does not take a thinking level" +
        OfferedBy(models, [](const ModelCapabilities& r) { return r.thinking == Support::kYes; }));
  }
  if (m.thinking == Support::kYes && !Contains(m.thinking_levels, thinking)) {
    return InvalidArgument(
        "model " + m.id + " does not take thinking " + thinking + ": it takes " +
        JoinList(m.thinking_levels) + OfferedBy(models, [&](const ModelCapabilities& r) {
          return r.thinking == Support::kYes && Contains(r.thinking_levels, thinking);
        }));
  }
  return Status::Ok();
}

}  // namespace

const std::vector<std::string>& ImageSizeNames() {
  static const std::vector<std::string> kNames = {"512", "1K", "2K", "4K"};
  return kNames;
}

const std::vector<std::string>& AspectRatioNames() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> out;
    for (const RatioSize& s : k1KSizes) out.emplace_back(s.ratio);
    return out;
  }();
  return kNames;
}

const std::vector<std::string>& StandardAspectRatios() {
  static const std::vector<std::string> kNames(AspectRatioNames().begin(),
                                               AspectRatioNames().begin() + kStandardRatioCount);
  return kNames;
}

const std::vector<std::string>& ThinkingLevelNames() {
  static const std::vector<std::string> kNames = {"minimal", "low", "medium", "high"};
  return kNames;
}

std::string_view ModelStatusName(ModelStatus status) {
  switch (status) {
    case ModelStatus::kGa:
      return "ga";
    case ModelStatus::kPreview:
      return "preview";
    case ModelStatus::kRetired:
      break;
  }
  return "retired";
}

int OutputImageTokens(const ModelCapabilities& model, std::string_view image_size) {
  if (image_size.empty() && !model.image_sizes.empty()) image_size = model.image_sizes.front();
  const auto it = model.output_image_tokens.find(image_size);
  return it == model.output_image_tokens.end() ? 0 : it->second;
}

std::string JoinList(const std::vector<std::string>& items, std::string_view last_sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? std::string(last_sep) : std::string(", ");
    out += items[i];
  }
  return out;
}

Result<ImageSize> PixelSize(std::string_view image_size, std::string_view aspect_ratio) {
  const SizeScale* scale = FindScale(image_size);
  if (scale == nullptr) {
    return InvalidArgument("image_size " + Quoted(image_size) +
                           " is not supported; allowed: " + JoinList(ImageSizeNames(), ", "));
  }
  for (const RatioSize& s : k1KSizes) {
    if (s.ratio == aspect_ratio) {
      return ImageSize{s.width * scale->num / scale->den, s.height * scale->num / scale->den};
    }
  }
  return InvalidArgument("aspect_ratio " + Quoted(aspect_ratio) +
                         " is not supported; allowed: " + JoinList(AspectRatioNames(), ", "));
}

Result<ImageSize> ScaleToImageSize(int width, int height, std::string_view image_size) {
  const SizeScale* scale = FindScale(image_size);
  if (scale == nullptr) {
    return InvalidArgument("image_size " + Quoted(image_size) +
                           " is not supported; allowed: " + JoinList(ImageSizeNames(), ", "));
  }
  if (width <= 0 || height <= 0) return InvalidArgument("image dimensions must be positive");
  const double side = 1024.0 * scale->num / scale->den;
  const double factor = std::sqrt(side * side / (static_cast<double>(width) * height));
  return ImageSize{std::max(1, static_cast<int>(std::lround(width * factor))),
                   std::max(1, static_cast<int>(std::lround(height * factor)))};
}

const ModelCapabilities* FindModel(const std::vector<ModelCapabilities>& models,
                                   std::string_view id) {
  for (const ModelCapabilities& m : models) {
    if (m.id == id) return &m;
  }
  return nullptr;
}

Status CheckGenerationOptions(const std::vector<ModelCapabilities>& models,
                              const GenerationOptions& o, const ModelCapabilities** chosen,
                              std::vector<std::string>* ignored) {
  if (models.empty()) return Error(ErrorCode::kInternal, "the backend lists no models");
  const ModelCapabilities* m = o.model.empty() ? &models.front() : FindModel(models, o.model);
  if (m == nullptr) {
    std::vector<std::string> ids;
    ids.reserve(models.size());
    for (const ModelCapabilities& row : models) ids.push_back(row.id);
    return InvalidArgument("model " + Quoted(o.model) +
                           " is not offered by this server; allowed: " + JoinList(ids, ", "));
  }
  const std::string model = "model " + m->id;
  if (!o.image_size.empty() && !Contains(m->image_sizes, o.image_size)) {
    if (!Contains(ImageSizeNames(), o.image_size)) {
      return InvalidArgument("image_size " + Quoted(o.image_size) + " is not one of " +
                             JoinList(ImageSizeNames(), ", "));
    }
    return InvalidArgument(model + " does not support image_size " + o.image_size +
                           ": it supports " + Spaced(m->image_sizes) +
                           (m->image_sizes.size() == 1 ? " only" : "") +
                           OfferedBy(models, [&](const ModelCapabilities& r) {
                             return Contains(r.image_sizes, o.image_size);
                           }));
  }
  if (!o.aspect_ratio.empty() && !Contains(m->aspect_ratios, o.aspect_ratio)) {
    if (!Contains(AspectRatioNames(), o.aspect_ratio)) {
      return InvalidArgument("aspect_ratio " + Quoted(o.aspect_ratio) + " is not one of " +
                             JoinList(AspectRatioNames(), ", "));
    }
    return InvalidArgument(model + " does not support aspect_ratio " + o.aspect_ratio +
                           ": it supports " + Spaced(m->aspect_ratios) +
                           OfferedBy(models, [&](const ModelCapabilities& r) {
                             return Contains(r.aspect_ratios, o.aspect_ratio);
                           }));
  }
  std::vector<std::string> unused;
  if (!o.thinking.empty()) {
    RETURN_IF_ERROR(CheckThinking(models, *m, o.thinking));
    if (m->thinking == Support::kIgnored) unused.push_back("thinking");
  }
  if (o.search) {
    if (m->search == Support::kNo) {
      return InvalidArgument(
          model + " does not support search (Google Search grounding)" +
          OfferedBy(models, [](const ModelCapabilities& r) { return r.search == Support::kYes; }));
    }
    if (m->search == Support::kIgnored) unused.push_back("search");
  }
  if (o.chain) {
    if (m->chain == Support::kNo) {
      return InvalidArgument(
          model + " does not support context \"chain\"" +
          OfferedBy(models, [](const ModelCapabilities& r) { return r.chain == Support::kYes; }));
    }
    if (m->chain == Support::kIgnored) unused.push_back("context chain");
  }
  if (o.input_images > m->max_input_images) {
    return InvalidArgument(model + " takes at most " + std::to_string(m->max_input_images) +
                           " input images (the image to edit counts as one); this request has " +
                           std::to_string(o.input_images));
  }
  if (chosen != nullptr) *chosen = m;
  if (ignored != nullptr) *ignored = std::move(unused);
  return Status::Ok();
}

std::string DescribeModel(const ModelCapabilities& m) {
  auto support = [](Support s, const std::string& yes, const std::string& no) {
    switch (s) {
      case Support::kYes:
        return yes;
      case Support::kIgnored:
        return no + " (accepted, no effect)";
      case Support::kNo:
        break;
    }
    return no;
  };
  std::string levels;
  for (const std::string& level : m.thinking_levels) levels += (levels.empty() ? "" : "|") + level;
  std::string retired;
  if (m.status == ModelStatus::kRetired) {
    retired = "; retired" + (m.retired_on.empty() ? "" : " on " + m.retired_on) +
              (m.replacement.empty() ? "" : " (use " + m.replacement + ")");
  }
  return m.id + ": image_size " + Spaced(m.image_sizes) + "; aspect_ratio " +
         Spaced(m.aspect_ratios) + "; up to " + std::to_string(m.max_input_images) +
         " input images; " + support(m.thinking, "thinking " + levels, "no thinking level") + "; " +
         support(m.search, "search", "no search") + "; " +
         support(m.chain, "context chain", "no context chain") + retired;
}

}  // namespace imgmcp::imaging
