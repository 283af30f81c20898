#include "imaging/call_cost.h"

#include <algorithm>
#include <cstdio>

#include "common/usd.h"

namespace imgmcp::imaging {
namespace {

constexpr double kPerToken = 1e-6;  // prices are per million tokens

int64_t Count(const Json& object, const char* key) {
  if (!object.is_object()) return 0;
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? std::max<int64_t>(0, it->get<int64_t>())
                                                       : 0;
}

// Tokens of `details` (promptTokensDetails or candidatesTokensDetails) whose modality is `kind`.
int64_t ByModality(const Json& usage, const char* details, std::string_view kind) {
  if (!usage.is_object()) return 0;
  auto list = usage.find(details);
  if (list == usage.end() || !list->is_array()) return 0;
  int64_t sum = 0;
  for (const Json& entry : *list) {
    auto modality = entry.is_object() ? entry.find("modality") : entry.end();
    if (entry.is_object() && modality != entry.end() && modality->is_string() &&
        modality->get_ref<const std::string&>() == kind) {
      sum += Count(entry, "tokenCount");
    }
  }
  return sum;
}

// "1,120". Built forwards: g++ 12 takes the in-place insert for an overlapping copy.
std::string Thousands(int64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && digits[i - 1] != '-' && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

int64_t ThoughtsAllowance(const ModelCapabilities& model, const std::string& thinking) {
  if (model.prices.thoughts == 0) return 0;
  if (thinking == "minimal") return kThoughtsAllowanceMinimal;
  if (thinking == "medium") return kThoughtsAllowanceMedium;
  return kThoughtsAllowanceHigh;
}

}  // namespace

CallCost PriceUsage(const ModelCapabilities& model, const Json& usage, int64_t grounding_queries,
                    double price_factor) {
  CallCost cost;
  cost.priced_model = model.id;
  cost.price_factor = price_factor;
  cost.grounding_queries = std::max<int64_t>(0, grounding_queries);
  const TokenPrices& p = model.prices;
  const int64_t prompt = Count(usage, "promptTokenCount");
  const int64_t prompt_image = std::min(prompt, ByModality(usage, "promptTokensDetails", "IMAGE"));
  const int64_t answer = Count(usage, "candidatesTokenCount");
  const int64_t answer_text =
      std::min(answer, ByModality(usage, "candidatesTokensDetails", "TEXT"));
  cost.input_tokens = prompt;
  cost.output_text_tokens = answer_text;
  cost.output_image_tokens = answer - answer_text;
  cost.thoughts_tokens = Count(usage, "thoughtsTokenCount");
  cost.usd = price_factor * kPerToken *
                 (static_cast<double>(prompt - prompt_image) * p.input_text +
                  static_cast<double>(prompt_image) * p.input_image +
                  static_cast<double>(cost.output_image_tokens) * p.output_image +
                  static_cast<double>(answer_text) * p.output_text +
                  static_cast<double>(cost.thoughts_tokens) * p.thoughts) +
             static_cast<double>(cost.grounding_queries) * model.usd_per_grounded_query;
  return cost;
}

CallCost EstimateCost(const ModelCapabilities& model, const CostInputs& inputs) {
  CallCost cost;
  cost.priced_model = model.id;
  const TokenPrices& p = model.prices;
  const auto text = static_cast<int64_t>(inputs.text_bytes);
  const int64_t images = int64_t{std::max(0, inputs.input_images)} * model.input_image_tokens;
  cost.input_tokens = text + images;
  cost.output_image_tokens = OutputImageTokens(model, inputs.image_size);
  cost.output_text_tokens = p.output_text > 0 ? kOutputTextAllowance : 0;
  cost.thoughts_tokens = ThoughtsAllowance(model, inputs.thinking);
  cost.grounding_queries = inputs.search ? kGroundingQueriesAllowance : 0;
  cost.usd = kPerToken * (static_cast<double>(text) * p.input_text +
                          static_cast<double>(images) * p.input_image +
                          static_cast<double>(cost.output_image_tokens) * p.output_image +
                          static_cast<double>(cost.output_text_tokens) * p.output_text +
                          static_cast<double>(cost.thoughts_tokens) * p.thoughts) +
             static_cast<double>(cost.grounding_queries) * model.usd_per_grounded_query;
  return cost;
}

Json CostJson(const CallCost& cost) {
  Json json = {{"usd", cost.usd},
               {"input_tokens", cost.input_tokens},
               {"output_image_tokens", cost.output_image_tokens},
               {"output_text_tokens", cost.output_text_tokens},
               {"thoughts_tokens", cost.thoughts_tokens},
               {"grounding_queries", cost.grounding_queries},
               {"priced_model", cost.priced_model}};
  if (cost.price_factor != 1) json["price_factor"] = cost.price_factor;
  return json;
}

std::string CostLine(const CallCost& cost) {
  std::string parts;
  const auto add = [&](int64_t n, const char* what) {
    if (n > 0) parts += (parts.empty() ? "" : ", ") + Thousands(n) + " " + what;
  };
  add(cost.output_image_tokens, "image tokens");
  add(cost.input_tokens, "input tokens");
  add(cost.output_text_tokens, "text tokens");
  add(cost.thoughts_tokens, "thinking tokens");
  add(cost.grounding_queries, cost.grounding_queries == 1 ? "search query" : "search queries");
  if (cost.price_factor != 1) {
    char factor[32];
    std::snprintf(factor, sizeof factor, "%g", cost.price_factor);
    parts += std::string(parts.empty() ? "" : ", ") + "tokens at the batch price, " + factor +
             " × the listed";
  }
  return "cost ≈ " + FormatUsd(cost.usd) + (parts.empty() ? "" : " (" + parts + ")");
}

}  // namespace imgmcp::imaging
