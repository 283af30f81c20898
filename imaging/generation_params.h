// Generation parameters: the vocabulary of output sizes, aspect ratios and thinking
// levels, the pixel size of every (size, ratio) pair, and the per-model capability record with
// the one check that every caller (tool validation, schemas, request builders) goes through.
// Each backend owns the capability rows of its models (ImageBackend::Models()); this file owns
// the rules that read them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace imgmcp::imaging {

struct ImageSize {
  int width = 0;
  int height = 0;
};

// "512", "1K", "2K", "4K" (Gemini's spelling: upper-case K).
const std::vector<std::string>& ImageSizeNames();
// The 14 aspect ratios any model may take: the 10 every Gemini image model takes
// (1:1 2:3 3:2 3:4 4:3 4:5 5:4 9:16 16:9 21:9) first, then 1:4 4:1 1:8 8:1.
const std::vector<std::string>& AspectRatioNames();
// The first 10 of AspectRatioNames().
const std::vector<std::string>& StandardAspectRatios();
// The thinking levels a model may take, in order of effort: "minimal", "low", "medium", "high"
// (Gemini's thinkingLevel, lower-case). Each model takes some of them (ModelCapabilities).
const std::vector<std::string>& ThinkingLevelNames();

// Pixel size of an image of `image_size` and `aspect_ratio`: Gemini's 1K table (1:1 1024x1024,
// 16:9 1344x768, …; 1:4 512x2048, 1:8 384x3072 and their transposes, about 1 MP) halved for
// 512 and doubled per step for 2K and 4K. kInvalidArgument naming what is allowed otherwise.
Result<ImageSize> PixelSize(std::string_view image_size, std::string_view aspect_ratio);

// `width` x `height` scaled (aspect kept, each side at least 1) to about the pixel count of
// `image_size` at 1:1 — what an edit asked for a size returns. kInvalidArgument for an unknown
// size or a non-positive input.
Result<ImageSize> ScaleToImageSize(int width, int height, std::string_view image_size);

// How a model treats an optional parameter.
enum class Support {
  kNo,       // not offered: asking for it is an error naming the model
  kYes,      // honoured
  kIgnored,  // accepted but without meaning for this model (the local engine); the result says so
};

// The most input images any model takes in one request (base image, references and replayed
// turns together); --chain-turns cannot exceed it.
inline constexpr int kMostInputImages = 14;

// Where a model is in its life: generally available, a preview, or retired (shut down upstream;
// refused unless the server allows retired models).
enum class ModelStatus { kGa, kPreview, kRetired };

// "ga", "preview", "retired".
std::string_view ModelStatusName(ModelStatus status);

// US dollars per million tokens of each kind.
struct TokenPrices {
  double input_text = 0;
  double input_image = 0;
  double output_text = 0;
  double output_image = 0;
  double thoughts = 0;
};

// What one model supports and costs: one row of the model table (imaging/model_table.h reads
// rows from JSON). Backends list theirs (ImageBackend::Models()).
struct ModelCapabilities {
  std::string id;
  ModelStatus status = ModelStatus::kGa;
  std::string retired_on;   // YYYY-MM-DD, when it was (or will be) shut down; "" = not announced
  std::string replacement;  // the model to use instead; "" = none named
  std::vector<std::string> image_sizes;     // subset of ImageSizeNames(), in that order
  std::vector<std::string> aspect_ratios;   // subset of AspectRatioNames(), in that order
  int max_input_images = kMostInputImages;  // per request: base image + references (+ replays)
  Support thinking = Support::kNo;          // a thinking level (kYes: one of thinking_levels)
  // The levels `thinking` takes, in ThinkingLevelNames() order; with Support::kIgnored, any.
  std::vector<std::string> thinking_levels;
  Support search = Support::kNo;  // Google Search grounding
  Support chain = Support::kNo;   // conversational edits replaying earlier turns
  int64_t input_token_limit = 0;  // per request; 0 = not limited here
  int input_image_tokens = 0;     // what one input image costs (estimate)
  // The tokens one output image costs, by image size (each of image_sizes); empty: not known.
  std::map<std::string, int, std::less<>> output_image_tokens;
  TokenPrices prices;                 // per million tokens
  double usd_per_grounded_query = 0;  // each Google Search query a grounded answer made
  // What a token costs in a batch job (Gemini's Batch API) against `prices`: 0.5 = half; 0 = the
  // model takes no batch delivery. Grounded queries keep their price.
  double batch_price_factor = 0;
  bool listed = true;  // false: an id outside the backend's table, given the minimal row
};

// The tokens one output image of `image_size` ("" = the model's first size) costs on `model`; 0
// when the row does not say.
int OutputImageTokens(const ModelCapabilities& model, std::string_view image_size);

// What a caller asked for; empty / false = not given.
struct GenerationOptions {
  std::string model;         // "" = the backend's default
  std::string image_size;    // "" = the model's default (nothing sent)
  std::string aspect_ratio;  // "" = not given (generation defaults to 1:1)
  std::string thinking;      // "" | "minimal" | "high"
  bool search = false;
  bool chain = false;    // edit_image context "chain"
  int input_images = 0;  // images the request carries besides replayed turns
};

// The row of `id` in `models`; nullptr when absent.
const ModelCapabilities* FindModel(const std::vector<ModelCapabilities>& models,
                                   std::string_view id);

// Checks `options` against the row of `options.model` in `models` (the first row when the model
// is ""). kInvalidArgument naming the model and what it supports, e.g.
// "model gemini-3.1-flash-lite-image does not support image_size 2K: it supports 1K only (2K:
// gemini-3.1-flash-image, gemini-3-pro-image)". On success, `*chosen` (optional) is the row and
// `*ignored` (optional) lists the given parameters the model ignores ("thinking", "search",
// "context chain").
Status CheckGenerationOptions(const std::vector<ModelCapabilities>& models,
                              const GenerationOptions& options,
                              const ModelCapabilities** chosen = nullptr,
                              std::vector<std::string>* ignored = nullptr);

// One line per model for descriptions and errors, e.g. "gemini-3.1-flash-image: image_size 512
// 1K 2K 4K; aspect_ratio 1:1 … 8:1; up to 14 input images; thinking; search".
std::string DescribeModel(const ModelCapabilities& model);

// "a, b and c".
std::string JoinList(const std::vector<std::string>& items, std::string_view last_sep = " or ");

}  // namespace imgmcp::imaging
