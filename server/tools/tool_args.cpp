#include "server/tools/tool_args.h"

#include <algorithm>
#include <cstdio>

#include "common/sha256.h"

namespace imgmcp::tools {

const char kInlineDescription[] =
    "How the image comes back in the result: \"preview\" (default; long edge at most 768 px and "
    "about 600 KB, fine for looking at it), \"full\" (the full-resolution bytes), or \"none\" (no "
    "image bytes; read the resource_link or the file path instead — best for agents that pass "
    "tool results on as text, such as ADK).";
const char kReferenceImagesDescription[] =
    "Optional extra images that guide the result (style, subject), at most 14. Each is "
    "{\"path\": ...} or {\"data\": ..., \"mime_type\": ...}.";
const char kReferenceImageDescription[] = "A reference image.";
const char kExistingSessionIdDescription[] =
    "The editing session; 1 to 64 characters from A-Z a-z 0-9 . _ -, starting with a letter or "
    "digit.";

const char kImageSizeDescription[] =
    "Output size: \"512\" (about 0.25 MP), \"1K\" (about 1 MP; the default), \"2K\" (about 4 MP) "
    "or \"4K\" (about 16 MP); an edit is scaled to about that many pixels, its ratio kept. Which "
    "sizes a model offers is listed under 'model'.";
const char kThinkingDescription[] =
    "How much the model reasons before drawing, from \"minimal\" (fastest) to \"high\" (better "
    "layouts and text). Only on the models listed with thinking under 'model', each with the "
    "levels listed there.";
const char kSearchDescription[] =
    "true: ground the image in Google Search results (today's weather, a recent event); the "
    "sources used come back in the result. Only on the models listed with search under 'model'.";
const char kMaxCostDescription[] =
    "Optional cap in US dollars: the call is refused before anything is sent when its worst-case "
    "estimate (model, image_size, images sent, thinking, search) is above it.";
const char kEstimateOnlyDescription[] =
    "true: answer the call's worst-case cost estimate and what it is made of; nothing is sent "
    "to the model and nothing is saved.";
const char kContextDescription[] =
    "\"image\" (default): a fresh request with the image to edit. \"chain\": a conversation that "
    "replays the session's last turns that led to the edited version (its own earlier answers, "
    "made by the same model, up to the server's --chain-turns) before the instruction, so the "
    "model keeps its reasoning across edits. Starts afresh after an import, a different model or "
    "a reset.";

const char kIdempotencyKeyDescription[] =
    "Optional. A key that makes this call happen at most once: 1 to 128 characters from A-Z a-z "
    "0-9 . _ : - (a UUID is ideal). Send the same key with the same arguments again (a retry after "
    "a timeout or a lost answer) and you get the first call's result, marked repeated, without "
    "anything being done twice; a key already used in this session with other arguments is an "
    "error. inline and save_to may differ on a retry; a retry writes no copy. A key lasts as long "
    "as the version its call made.";
const char kDeliveryDescription[] =
    "Optional. \"now\" (the default) answers with the image. \"batch\" sends the generation in a "
    "Gemini batch job at about half the price: the call returns a task at once and the image "
    "arrives when the job ends — usually within minutes, at most 24 hours. Only for clients that "
    "support tasks, without reference_images, save_to or idempotency_key.";

std::string BatchWaitingMessage(std::chrono::milliseconds window) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", static_cast<double>(window.count()) / 1000);
  return std::string("waiting for the batch window (") + seconds +
         " s), then one Gemini batch job with the calls that came meanwhile";
}

const std::vector<std::string>& DeliveryChoices() {
  static const std::vector<std::string> kChoices = {"now", "batch"};
  return kChoices;
}

const char kGenerateIdempotencyKeyDescription[] =
    "Optional. A key that makes this call happen at most once: 1 to 128 characters from A-Z a-z "
    "0-9 . _ : - (a UUID is ideal). Send the same key with the same arguments again (a retry after "
    "a timeout or a lost answer) and you get the first call's result, marked repeated, without "
    "generating again; a key already used in the session with other arguments is an error. "
    "Without session_id the key also names the new session, so a retry finds it: use a key no "
    "other call uses. inline and save_to may differ on a retry; a retry writes no copy. A key "
    "lasts as long as the version its call made.";

Json WithSessionIdHeader(Json input_schema) {
  input_schema.at("properties").at("session_id")["x-mcp-header"] = kSessionIdHeaderName;
  return input_schema;
}

imaging::GenerationOptions GenerateImageArgs::Options() const {
  imaging::GenerationOptions options = generation.Options();
  options.aspect_ratio = aspect_ratio.value_or("");
  options.input_images = static_cast<int>(reference_images.size());
  return options;
}

imaging::CostInputs GenerateImageArgs::CostInputs(const imaging::GenerationOptions& options) const {
  return {.text_bytes = prompt.size(),
          .input_images = options.input_images,
          .image_size = options.image_size,
          .thinking = options.thinking,
          .search = options.search};
}

std::optional<std::string> GenerateImageArgs::SessionFor() const {
  if (session_id) return session_id;
  if (!idempotency_key) return std::nullopt;
  return "img-" + Sha256Hex("idempotency_key:" + *idempotency_key).substr(0, 16);
}

const std::vector<std::string>& ContextNames() {
  static const std::vector<std::string> kNames = {"image", "chain"};
  return kNames;
}

namespace {

// `vocabulary`'s entries that at least one of `lists` contains, in the vocabulary's order.
std::vector<std::string> Union(const std::vector<std::string>& vocabulary,
                               const std::vector<const std::vector<std::string>*>& lists) {
  std::vector<std::string> out;
  for (const std::string& item : vocabulary) {
    for (const auto* list : lists) {
      if (std::find(list->begin(), list->end(), item) != list->end()) {
        out.push_back(item);
        break;
      }
    }
  }
  return out;
}

}  // namespace

void OfferModels(const std::vector<imaging::ModelCapabilities>& models, ArgumentOptions& options) {
  options.model_ids.clear();
  std::vector<const std::vector<std::string>*> sizes;
  std::vector<const std::vector<std::string>*> ratios;
  std::vector<const std::vector<std::string>*> levels;
  std::string lines;
  for (const imaging::ModelCapabilities& m : models) {
    options.model_ids.push_back(m.id);
    sizes.push_back(&m.image_sizes);
    ratios.push_back(&m.aspect_ratios);
    levels.push_back(&m.thinking_levels);
    lines += "\n- " + imaging::DescribeModel(m);
  }
  options.image_sizes = Union(imaging::ImageSizeNames(), sizes);
  options.aspect_ratios = Union(imaging::AspectRatioNames(), ratios);
  options.thinking_levels = Union(imaging::ThinkingLevelNames(), levels);
  // No model takes a level: the schema keeps the vocabulary (never an empty enum) and the check
  // says which model takes none.
  if (options.thinking_levels.empty()) options.thinking_levels = imaging::ThinkingLevelNames();
  options.models_description =
      "Which model makes the image" +
      (models.empty() ? std::string(".") : "; default " + models.front().id + ".") +
      " What each takes:" + lines;
}

imaging::GenerationOptions GenerationArgs::Options() const {
  imaging::GenerationOptions o;
  o.model = model.value_or("");
  o.image_size = image_size.value_or("");
  o.thinking = thinking.value_or("");
  o.search = search.value_or(false);
  return o;
}

const EnumChoices<InlineMode>& InlineModeChoices() {
  static const EnumChoices<InlineMode> kChoices = {
      {"preview", InlineMode::kPreview}, {"full", InlineMode::kFull}, {"none", InlineMode::kNone}};
  return kChoices;
}

Status EditImageArgs::Check(const std::string& where) const {
  if (image.has_value() && from_version.has_value()) {
    return Error(ErrorCode::kInvalidArgument,
                 "'image' and 'from_version' cannot be used together: 'image' edits an outside "
                 "image, 'from_version' an earlier version of the session");
  }
  return save.Check(where);
}

}  // namespace imgmcp::tools
