#include "gemini_client/models.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/ascii.h"
#include "common/log.h"
#include "imaging/model_table.h"

namespace imgmcp::gemini {
namespace {

using imaging::ModelCapabilities;
using imaging::ModelStatus;
using imaging::Support;

constexpr char kBuiltInSource[] = "the built-in model table (gemini_client/models.json)";

Result<std::string> ReadTableFile(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "--model-table " + file + ": cannot be read (no such file, or no permission)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return MakeError(ErrorCode::kInvalidArgument, "--model-table " + file + ": read failed");
  }
  return text.str();
}

}  // namespace

// Sources of each row: docs/generation.md, "The model table".
const std::vector<ModelCapabilities>& BuiltInGeminiModels() {
  static const std::vector<ModelCapabilities> kModels = [] {
    auto table = imaging::ParseModelTable(BuiltInModelTableJson(), kBuiltInSource);
    if (!table.ok()) {  // a broken build: models_test reads the same document
      log::Error("gemini", table.error().message);
      std::abort();
    }
    return std::move(table).value();
  }();
  return kModels;
}

Result<std::vector<ModelCapabilities>> LoadGeminiModelTable(const std::string& file) {
  if (file.empty()) return BuiltInGeminiModels();
  ASSIGN_OR_RETURN(const std::string text, ReadTableFile(file));
  return imaging::MergeModelTable(BuiltInGeminiModels(), text, "--model-table " + file);
}

ModelCapabilities UnlistedGeminiModel(std::string id) {
  ModelCapabilities m;
  m.id = std::move(id);
  m.image_sizes = {"1K"};
  m.aspect_ratios = imaging::StandardAspectRatios();
  m.max_input_images = imaging::kMostInputImages;
  m.chain = Support::kYes;
  m.input_token_limit = 32'768;
  m.input_image_tokens = 1290;
  m.listed = false;
  return m;
}

std::string RetiredModelNote(const std::vector<ModelCapabilities>& table, std::string_view model) {
  const ModelCapabilities* row = imaging::FindModel(table, model);
  if (row == nullptr || row->status != ModelStatus::kRetired) return "";
  const std::string current = imaging::CurrentReplacement(table, row->id);
  std::string use;
  if (current == row->replacement) {
    use = "use " + current + " instead";
  } else if (!current.empty()) {
    use = "its replacement " + row->replacement + " is retired too: use " + current + " instead";
  } else {
    use = "no current model replaces it";
  }
  return "model " + row->id + " was retired on " + row->retired_on + "; " + use +
         " (--allow-retired lets it through for an endpoint that still serves it)";
}

Result<std::vector<ModelCapabilities>> OfferedGeminiModels(
    const std::vector<ModelCapabilities>& table, const ModelChoice& choice) {
  std::vector<std::string> ids;
  if (choice.allow_list.empty()) {
    for (const ModelCapabilities& m : table) {
      if (choice.allow_retired || m.status != ModelStatus::kRetired) ids.push_back(m.id);
    }
  } else {
    ids = choice.allow_list;
    if (std::find(ids.begin(), ids.end(), choice.default_model) == ids.end()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "the default model " + choice.default_model +
                           " is not in the allowed models (" + imaging::JoinList(ids, ", ") +
                           "); add it to --models or choose another --model");
    }
  }
  ids.insert(ids.begin(), choice.default_model);
  std::vector<ModelCapabilities> out;
  for (const std::string& id : ids) {
    if (imaging::FindModel(out, id) != nullptr) continue;
    const ModelCapabilities* known = imaging::FindModel(table, id);
    if (known != nullptr && known->status == ModelStatus::kRetired && !choice.allow_retired) {
      return MakeError(ErrorCode::kInvalidArgument,
                       (id == choice.default_model ? "the default " : "the allowed ") +
                           RetiredModelNote(table, id));
    }
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
    const std::string_view item = TrimSpacesAndTabs(text.substr(start, end - start));
    if (!item.empty()) out.emplace_back(item);
    start = end + 1;
  }
  return out;
}

}  // namespace imgmcp::gemini
