// What a call costs (imaging/call_cost.h): usageMetadata priced by modality with a model table
// row, search queries priced each, the worst-case estimate and its allowances, and the text line.
#include "imaging/call_cost.h"

#include <gtest/gtest.h>

#include "imaging/model_table.h"

namespace imgmcp::imaging {
namespace {

ModelCapabilities Row() {
  auto table = ParseModelTable(R"({"models": [{
    "id": "m", "status": "ga", "sizes": ["1K", "4K"], "aspect_ratios": ["1:1"],
    "max_reference_images": 14, "thinking": ["minimal", "medium", "high"], "search": true,
    "input_token_limit": 131072, "output_image_tokens": {"1K": 1120, "4K": 2520},
    "prices_usd_per_million_tokens": {"input_text": 0.5, "input_image": 0.25, "output_text": 3,
                                      "output_image": 60, "thoughts": 2},
    "usd_per_grounded_query": 0.014}]})",
                               "test");
  EXPECT_TRUE(table.ok()) << table.error().message;
  return table->front();
}

TEST(PriceUsage, PricesEachKindOfTokenWithItsPrice) {
  const Json usage = Json::parse(R"({
    "promptTokenCount": 578, "candidatesTokenCount": 1132, "thoughtsTokenCount": 200,
    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 18},
                            {"modality": "IMAGE", "tokenCount": 560}],
    "candidatesTokensDetails": [{"modality": "IMAGE", "tokenCount": 1120},
                                {"modality": "TEXT", "tokenCount": 12}]})");
  const CallCost cost = PriceUsage(Row(), usage, 2);
  EXPECT_EQ(cost.input_tokens, 578);
  EXPECT_EQ(cost.output_image_tokens, 1120);
  EXPECT_EQ(cost.output_text_tokens, 12);
  EXPECT_EQ(cost.thoughts_tokens, 200);
  EXPECT_EQ(cost.grounding_queries, 2);
  EXPECT_EQ(cost.priced_model, "m");
  const double expected =
      (18 * 0.5 + 560 * 0.25 + 1120 * 60.0 + 12 * 3.0 + 200 * 2.0) / 1e6 + 2 * 0.014;
  EXPECT_DOUBLE_EQ(cost.usd, expected);
}

TEST(PriceUsage, TokensWithoutAModalityArePricedAsPromptTextAndAnswerImage) {
  const CallCost cost =
      PriceUsage(Row(), Json::parse(R"({"promptTokenCount": 10, "candidatesTokenCount": 100})"), 0);
  EXPECT_DOUBLE_EQ(cost.usd, (10 * 0.5 + 100 * 60.0) / 1e6);
  EXPECT_EQ(PriceUsage(Row(), Json(), 0).usd, 0);  // no usage reported: nothing to price
}

TEST(PriceUsage, ABatchAnswerPricesTokensAtTheFactorAndQueriesAtTheirPrice) {
  const Json usage = Json::parse(R"({"promptTokenCount": 10, "candidatesTokenCount": 1120})");
  const CallCost listed = PriceUsage(Row(), usage, 1);
  const CallCost batch = PriceUsage(Row(), usage, 1, 0.5);
  EXPECT_DOUBLE_EQ(batch.usd, (10 * 0.5 + 1120 * 60.0) / 1e6 * 0.5 + 0.014);
  EXPECT_DOUBLE_EQ(batch.usd - 0.014, (listed.usd - 0.014) / 2);
  EXPECT_EQ(batch.price_factor, 0.5);
  EXPECT_EQ(batch.output_image_tokens, listed.output_image_tokens);  // the same tokens counted
  EXPECT_EQ(CostJson(batch)["price_factor"], 0.5);
  EXPECT_FALSE(CostJson(listed).contains("price_factor"));
  EXPECT_EQ(CostLine(batch),
            "cost ≈ $0.0476 (1,120 image tokens, 10 input tokens, 1 search query, tokens at the "
            "batch price, 0.5 × the listed)");
}

TEST(EstimateCost, IsTheWorstCaseOfWhatTheCallMaySend) {
  const CallCost e = EstimateCost(Row(), {.text_bytes = 100,
                                          .input_images = 2,
                                          .image_size = "4K",
                                          .thinking = "minimal",
                                          .search = true});
  EXPECT_EQ(e.input_tokens, 100 + 2 * 2520);  // an input image at the most an image counts
  EXPECT_EQ(e.output_image_tokens, 2520);
  EXPECT_EQ(e.thoughts_tokens, kThoughtsAllowanceMinimal);
  EXPECT_EQ(e.grounding_queries, kGroundingQueriesAllowance);
  EXPECT_DOUBLE_EQ(e.usd, (100 * 0.5 + 2 * 2520 * 0.25 + 2520 * 60.0 + kOutputTextAllowance * 3.0 +
                           kThoughtsAllowanceMinimal * 2.0) /
                                  1e6 +
                              kGroundingQueriesAllowance * 0.014);
  // No level asked for: the most thinking; no size: the model's first.
  const CallCost d = EstimateCost(Row(), {.text_bytes = 1});
  EXPECT_EQ(d.thoughts_tokens, kThoughtsAllowanceHigh);
  EXPECT_EQ(d.output_image_tokens, 1120);
  EXPECT_EQ(d.grounding_queries, 0);
}

TEST(CostLine, SaysTheDollarsAndTheTokens) {
  CallCost cost;
  cost.usd = 0.0336;
  cost.output_image_tokens = 1120;
  cost.input_tokens = 18;
  EXPECT_EQ(CostLine(cost), "cost ≈ $0.0336 (1,120 image tokens, 18 input tokens)");
  cost.output_image_tokens = 1234567;
  cost.input_tokens = 100;
  EXPECT_EQ(CostLine(cost), "cost ≈ $0.0336 (1,234,567 image tokens, 100 input tokens)");
  EXPECT_EQ(CostLine(CallCost{}), "cost ≈ $0.0000");
  cost = {};
  cost.usd = 0.0000045;
  cost.grounding_queries = 1;
  EXPECT_EQ(CostLine(cost), "cost ≈ $0.000005 (1 search query)");
}

TEST(CostJson, NamesEveryFieldOfStructuredContentCost) {
  CallCost cost;
  cost.usd = 0.12;
  cost.input_tokens = 3;
  cost.output_image_tokens = 1120;
  cost.output_text_tokens = 4;
  cost.thoughts_tokens = 5;
  cost.grounding_queries = 1;
  cost.priced_model = "m";
  EXPECT_EQ(CostJson(cost), Json::parse(R"({"usd": 0.12, "input_tokens": 3,
      "output_image_tokens": 1120, "output_text_tokens": 4, "thoughts_tokens": 5,
      "grounding_queries": 1, "priced_model": "m"})"));
}

}  // namespace
}  // namespace imgmcp::imaging
