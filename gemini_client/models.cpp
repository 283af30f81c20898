#include "gemini_client/models.h"

#include <algorithm>

namespace imgmcp::gemini {
namespace {

using imaging::ModelCapabilities;
using imaging::Support;

ModelCapabilities Row(std::string id, std::vector<std::string> sizes,
                      std::vector<std::string> ratios, int max_images, Support thinking,
                      Support search, int64_t input_tokens, int image_tokens) {
  ModelCapabilities m;
  m.id = std::move(id);
  m.image_sizes = std::move(sizes);
  m.aspect_ratios = std::move(ratios);
  m.max_input_images = max_images;
  m.thinking = thinking;
  m.search = search;
  m.chain = Support::kYes;  // every model takes a chat history; 3.x ones need their signatures
  m.input_token_limit = input_tokens;
  m.input_image_tokens = image_tokens;
  return m;
}

}  // namespace

// Sources: Google's Gemini API and Vertex model pages (summarised in docs/generation.md). 3.1 Flash-Lite takes the
// 10 ratios ai.google.dev lists (the Vertex page's 14 are not promised for the Gemini API).
// Input image tokens are what one input image costs (1120 for 3.x at the default media
// resolution; 2.5 Flash counts tiles, 1290 bounds a 1K image); they only bound a chain's window.
const std::vector<ModelCapabilities>& KnownGeminiModels() {
  static const std::vector<ModelCapabilities> kModels = [] {
    const auto& ten = imaging::StandardAspectRatios();
    const auto& fourteen = imaging::AspectRatioNames();
    std::vector<ModelCapabilities> m;
    m.push_back(Row("gemini-3.1-flash-lite-image", {"1K"}, ten, 14, Support::kYes, Support::kNo,
                    65'536, 560));
    m.push_back(Row("gemini-3.1-flash-image", {"512", "1K", "2K", "4K"}, fourteen, 14,
                    Support::kYes, Support::kYes, 131'072, 1120));
    m.push_back(Row("gemini-3.1-flash-image-preview", {"512", "1K", "2K", "4K"}, fourteen, 14,
                    Support::kYes, Support::kYes, 131'072, 1120));
    m.push_back(Row("gemini-3-pro-image", {"1K", "2K", "4K"}, ten, 14, Support::kNo, Support::kYes,
                    65'536, 1120));
    m.push_back(Row("gemini-3-pro-image-preview", {"1K", "2K", "4K"}, ten, 14, Support::kNo,
                    Support::kYes, 65'536, 1120));
    m.push_back(
        Row("gemini-2.5-flash-image", {"1K"}, ten, 3, Support::kNo, Support::kNo, 32'768, 1290));
    return m;
  }();
  return kModels;
}

ModelCapabilities UnlistedGeminiModel(std::string id) {
  ModelCapabilities m = Row(std::move(id), {"1K"}, imaging::StandardAspectRatios(), 14,
                            Support::kNo, Support::kNo, 32'768, 1290);
  m.listed = false;
  return m;
}

Result<std::vector<ModelCapabilities>> OfferedGeminiModels(
    const std::string& default_model, const std::vector<std::string>& allow_list) {
  std::vector<std::string> ids;
  if (allow_list.empty()) {
    for (const ModelCapabilities& m : KnownGeminiModels()) ids.push_back(m.id);
  } else {
    ids = allow_list;
    if (std::find(ids.begin(), ids.end(), default_model) == ids.end()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "the default model " + default_model + " is not in the allowed models (" +
                           imaging::JoinList(ids, ", ") +
                           "); add it to --models or choose another --model");
    }
  }
  ids.insert(ids.begin(), default_model);
  std::vector<ModelCapabilities> out;
  for (const std::string& id : ids) {
    if (imaging::FindModel(out, id) != nullptr) continue;
    const ModelCapabilities* known = imaging::FindModel(KnownGeminiModels(), id);
    out.push_back(known != nullptr ? *known : UnlistedGeminiModel(id));
  }
  return out;
}

std::vector<std::string> SplitModelList(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(start, end - start);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    start = end + 1;
  }
  return out;
}

}  // namespace imgmcp::gemini
