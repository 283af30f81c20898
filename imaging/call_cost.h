// What a backend call costs (docs/generation.md, "What it costs"): the price of what the backend
// reported (PriceUsage), and the worst case before any request (EstimateCost), both from the one
// model table (ModelCapabilities::prices, output_image_tokens, usd_per_grounded_query).
#pragma once

#include <cstdint>
#include <string>

#include "common/json.h"
#include "imaging/generation_params.h"

namespace imgmcp::imaging {

// What one call cost, by kind of token, priced with `priced_model`'s row.
struct CallCost {
  double usd = 0;
  int64_t input_tokens = 0;  // the prompt: text and images
  int64_t output_image_tokens = 0;
  int64_t output_text_tokens = 0;
  int64_t thoughts_tokens = 0;
  int64_t grounding_queries = 0;
  std::string priced_model;
  // What the tokens were priced at against the row's prices: 1, or the model's
  // batch_price_factor for an answer of a batch job.
  double price_factor = 1;
};

// The cost of an answer from its usage (Gemini's usageMetadata: promptTokenCount and
// promptTokensDetails by modality, candidatesTokensDetails, thoughtsTokenCount) and the number
// of Google Search queries it ran. Prompt tokens without a modality are priced as text; answer
// tokens without one as image (the dearer). A usage that is not an object costs nothing. Tokens
// cost `price_factor` × the row's prices (a batch job's answer: the model's batch_price_factor);
// grounded queries their listed price.
CallCost PriceUsage(const ModelCapabilities& model, const Json& usage, int64_t grounding_queries,
                    double price_factor = 1);

// What a call may need, as far as the estimate is concerned.
struct CostInputs {
  size_t text_bytes = 0;   // the instruction (and for a chain, the replayed turns' texts)
  int input_images = 0;    // images sent: base, references and replayed turns' images
  std::string image_size;  // "" = the model's first
  std::string thinking;    // "" = the model's own default
  bool search = false;
};

// Allowances of the worst case for what a request cannot bound: the answer's text, thinking (by
// level) and the number of search queries.
inline constexpr int64_t kOutputTextAllowance = 1024;
inline constexpr int64_t kThoughtsAllowanceMinimal = 1024;
inline constexpr int64_t kThoughtsAllowanceMedium = 4096;
inline constexpr int64_t kThoughtsAllowanceHigh = 8192;  // also when no level is asked for
inline constexpr int64_t kGroundingQueriesAllowance = 5;

// The worst case of one call: every text byte a token, every input image at the most an image
// costs on the model, the output image at its size's tokens, and the allowances above. `usd` and
// the counts; `priced_model` is the model.
CallCost EstimateCost(const ModelCapabilities& model, const CostInputs& inputs);

// {usd, input_tokens, output_image_tokens, output_text_tokens, thoughts_tokens,
//  grounding_queries, priced_model}, and price_factor when it is not 1: structuredContent.cost
// (README.md, "What it costs").
Json CostJson(const CallCost& cost);

// "cost ≈ $0.0336 (1,120 image tokens, 18 input tokens)": the result text's line.
std::string CostLine(const CallCost& cost);

}  // namespace imgmcp::imaging
