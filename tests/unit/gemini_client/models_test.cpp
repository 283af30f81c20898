#include "gemini_client/models.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace imgmcp::gemini {
namespace {

using imaging::ModelCapabilities;
using imaging::ModelStatus;
using imaging::Support;

const ModelCapabilities& Row(const std::string& id) {
  const ModelCapabilities* row = imaging::FindModel(BuiltInGeminiModels(), id);
  EXPECT_NE(row, nullptr) << id;
  static const ModelCapabilities kNone;
  return row != nullptr ? *row : kNone;
}

std::vector<std::string> Ids(const std::vector<ModelCapabilities>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(r.id);
  return out;
}

ModelChoice Choice(std::string default_model, std::vector<std::string> allow = {},
                   bool allow_retired = false) {
  return ModelChoice{std::move(default_model), std::move(allow), allow_retired};
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The built-in table (gemini_client/models.json; docs/generation.md), row by row.
TEST(GeminiModelsTest, TheBuiltInTableIsTheDocumentedTable) {
  EXPECT_EQ(
      Ids(BuiltInGeminiModels()),
      (std::vector<std::string>{"gemini-3.1-flash-lite-image", "gemini-nano-banana-2.1",
                                "gemini-3-pro-image", "gemini-3.1-flash-image",
                                "gemini-3.1-flash-image-preview", "gemini-3-pro-image-preview",
                                "gemini-2.5-flash-image", "gemini-2.5-flash-image-preview"}));
  const auto& ten = imaging::StandardAspectRatios();
  const auto& fourteen = imaging::AspectRatioNames();
  using Levels = std::vector<std::string>;

  const ModelCapabilities& lite = Row("gemini-3.1-flash-lite-image");
  EXPECT_EQ(lite.status, ModelStatus::kGa);
  EXPECT_EQ(lite.image_sizes, std::vector<std::string>{"1K"});
  EXPECT_EQ(lite.aspect_ratios, ten);
  EXPECT_EQ(lite.thinking, Support::kYes);
  EXPECT_EQ(lite.thinking_levels, (Levels{"minimal", "high"}));
  EXPECT_EQ(lite.search, Support::kNo);
  EXPECT_EQ(lite.max_input_images, 14);
  EXPECT_EQ(lite.input_token_limit, 65'536);
  EXPECT_EQ(imaging::OutputImageTokens(lite, "1K"), 1120);
  EXPECT_DOUBLE_EQ(lite.prices.output_image * 1120 / 1e6, 0.0336);  // issue #37's example

  const ModelCapabilities& nano = Row("gemini-nano-banana-2.1");
  EXPECT_EQ(nano.status, ModelStatus::kGa);
  EXPECT_EQ(nano.image_sizes, (std::vector<std::string>{"1K", "2K", "4K"}));
  EXPECT_EQ(nano.aspect_ratios, fourteen);  // the extreme ratios 1:4 4:1 1:8 8:1 too
  EXPECT_EQ(nano.thinking_levels, (Levels{"minimal", "medium", "high"}));
  EXPECT_EQ(imaging::OutputImageTokens(nano, "4K"), 2520);

  const ModelCapabilities& pro = Row("gemini-3-pro-image");
  EXPECT_EQ(pro.image_sizes, (std::vector<std::string>{"1K", "2K", "4K"}));
  EXPECT_EQ(pro.aspect_ratios, ten);
  EXPECT_EQ(pro.thinking, Support::kNo);  // it always thinks; no level to choose
  EXPECT_EQ(pro.search, Support::kYes);

  // Retired, each with its date and replacement.
  struct Retired {
    const char* id;
    const char* on;
    const char* replacement;
  };
  for (const Retired& r :
       {Retired{"gemini-3.1-flash-image", "2026-10-29", "gemini-nano-banana-2.1"},
        Retired{"gemini-3.1-flash-image-preview", "2026-06-25", "gemini-3.1-flash-image"},
        Retired{"gemini-3-pro-image-preview", "2026-06-25", "gemini-3-pro-image"},
        Retired{"gemini-2.5-flash-image", "2026-10-02", "gemini-3.1-flash-lite-image"},
        Retired{"gemini-2.5-flash-image-preview", "2026-01-15", "gemini-2.5-flash-image"}}) {
    const ModelCapabilities& row = Row(r.id);
    EXPECT_EQ(row.status, ModelStatus::kRetired) << row.id;
    EXPECT_EQ(row.retired_on, r.on) << row.id;
    EXPECT_EQ(row.replacement, r.replacement) << row.id;
  }
  EXPECT_EQ(Row("gemini-2.5-flash-image").max_input_images, 3);
  EXPECT_EQ(Row("gemini-3.1-flash-image").image_sizes,
            (std::vector<std::string>{"512", "1K", "2K", "4K"}));
  for (const ModelCapabilities& m : BuiltInGeminiModels()) {
    EXPECT_EQ(m.chain, Support::kYes) << m.id;
    EXPECT_TRUE(m.listed) << m.id;
    EXPECT_GT(m.input_image_tokens, 0) << m.id;
    EXPECT_GT(m.prices.output_image, 0) << m.id;
    EXPECT_EQ(m.output_image_tokens.size(), m.image_sizes.size()) << m.id;
    EXPECT_EQ(m.search == Support::kYes, m.usd_per_grounded_query > 0) << m.id;
    EXPECT_EQ(m.batch_price_factor, 0.5) << m.id;  // Gemini's Batch API: half the price
  }
}

TEST(GeminiModelsTest, OfferedModelsPutTheDefaultFirstAndLeaveRetiredOnesOut) {
  const auto& table = BuiltInGeminiModels();
  auto all = OfferedGeminiModels(table, Choice("gemini-3-pro-image"));
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(Ids(*all),
            (std::vector<std::string>{"gemini-3-pro-image", "gemini-3.1-flash-lite-image",
                                      "gemini-nano-banana-2.1"}));
  auto with_retired = OfferedGeminiModels(table, Choice("gemini-3-pro-image", {}, true));
  ASSERT_TRUE(with_retired.ok());
  EXPECT_EQ(with_retired->size(), table.size());

  auto some = OfferedGeminiModels(
      table, Choice("gemini-nano-banana-2.1",
                    {"gemini-3-pro-image", "gemini-nano-banana-2.1", "gemini-3-pro-image"}));
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(Ids(*some), (std::vector<std::string>{"gemini-nano-banana-2.1", "gemini-3-pro-image"}));

  auto missing =
      OfferedGeminiModels(table, Choice("gemini-3-pro-image", {"gemini-nano-banana-2.1"}));
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Has(missing.error().message, "gemini-3-pro-image"));
  EXPECT_TRUE(Has(missing.error().message, "--models"));
}

TEST(GeminiModelsTest, ARetiredModelIsRefusedNamingItsDateAndReplacement) {
  const auto& table = BuiltInGeminiModels();
  auto as_default = OfferedGeminiModels(table, Choice("gemini-2.5-flash-image"));
  ASSERT_FALSE(as_default.ok());
  EXPECT_EQ(as_default.error().message,
            "the default model gemini-2.5-flash-image was retired on 2026-10-02; use "
            "gemini-3.1-flash-lite-image instead (--allow-retired lets it through for an endpoint "
            "that still serves it)");
  auto allowed =
      OfferedGeminiModels(table, Choice("gemini-3.1-flash-lite-image",
                                        {"gemini-3.1-flash-lite-image", "gemini-3.1-flash-image"}));
  ASSERT_FALSE(allowed.ok());
  EXPECT_TRUE(Has(allowed.error().message,
                  "the allowed model gemini-3.1-flash-image was retired "
                  "on 2026-10-29; use gemini-nano-banana-2.1 instead"));
  EXPECT_TRUE(OfferedGeminiModels(table, Choice("gemini-2.5-flash-image", {}, true)).ok());

  // A replacement that is retired too leads on to the current model.
  EXPECT_EQ(RetiredModelNote(table, "gemini-3.1-flash-image-preview"),
            "model gemini-3.1-flash-image-preview was retired on 2026-06-25; its replacement "
            "gemini-3.1-flash-image is retired too: use gemini-nano-banana-2.1 instead "
            "(--allow-retired lets it through for an endpoint that still serves it)");
  EXPECT_EQ(RetiredModelNote(table, "gemini-nano-banana-2.1"), "");
  EXPECT_EQ(RetiredModelNote(table, "gemini-9-image"), "");
}

TEST(GeminiModelsTest, AnUnlistedIdGetsWhatEveryModelTakes) {
  auto rows = OfferedGeminiModels(BuiltInGeminiModels(), Choice("gemini-9-image"));
  ASSERT_TRUE(rows.ok());
  const ModelCapabilities& row = rows->front();
  EXPECT_EQ(row.id, "gemini-9-image");
  EXPECT_FALSE(row.listed);
  EXPECT_EQ(row.image_sizes, std::vector<std::string>{"1K"});
  EXPECT_EQ(row.aspect_ratios, imaging::StandardAspectRatios());
  EXPECT_EQ(row.thinking, Support::kNo);
  EXPECT_EQ(row.search, Support::kNo);
}

TEST(GeminiModelsTest, AModelTableFileAddsAndCorrectsRowsOfTheBuiltInOne) {
  EXPECT_EQ(Ids(*LoadGeminiModelTable("")), Ids(BuiltInGeminiModels()));
  const std::string path = ::testing::TempDir() + "/imgmcp-model-table-test.json";
  {
    std::ofstream out(path);
    out << R"({"models": [
      {"id": "gemini-3-pro-image", "prices_usd_per_million_tokens":
        {"input_text": 1, "input_image": 1, "output_text": 6, "output_image": 60, "thoughts": 6}},
      {"id": "gemini-4-image", "status": "preview", "sizes": ["1K", "2K"],
       "aspect_ratios": ["1:1", "16:9"], "max_reference_images": 6, "thinking": ["low", "high"],
       "search": false, "input_token_limit": 100000,
       "output_image_tokens": {"1K": 1000, "2K": 1500},
       "prices_usd_per_million_tokens":
         {"input_text": 0.1, "input_image": 0.2, "output_text": 1, "output_image": 20, "thoughts": 1},
       "usd_per_grounded_query": 0}]})";
  }
  auto table = LoadGeminiModelTable(path);
  ASSERT_TRUE(table.ok()) << table.error().message;
  EXPECT_EQ(table->size(), BuiltInGeminiModels().size() + 1);
  EXPECT_EQ(table->back().id, "gemini-4-image");
  EXPECT_EQ(table->back().thinking_levels, (std::vector<std::string>{"low", "high"}));
  const ModelCapabilities* pro = imaging::FindModel(*table, "gemini-3-pro-image");
  ASSERT_NE(pro, nullptr);
  EXPECT_EQ(pro->prices.output_image, 60);
  EXPECT_EQ(pro->image_sizes, Row("gemini-3-pro-image").image_sizes);  // the rest unchanged
  std::remove(path.c_str());

  auto unreadable = LoadGeminiModelTable(path);
  ASSERT_FALSE(unreadable.ok());
  EXPECT_TRUE(Has(unreadable.error().message, "--model-table " + path + ": cannot be read"));
}

TEST(GeminiModelsTest, SplitModelList) {
  EXPECT_EQ(SplitModelList(" a , b,,c "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(SplitModelList("").empty());
  EXPECT_TRUE(SplitModelList(" , ").empty());
}

}  // namespace
}  // namespace imgmcp::gemini
