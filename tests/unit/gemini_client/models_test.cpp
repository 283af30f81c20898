#include "gemini_client/models.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace imgmcp::gemini {
namespace {

using imaging::ModelCapabilities;
using imaging::Support;

const ModelCapabilities& Row(const std::string& id) {
  const ModelCapabilities* row = imaging::FindModel(KnownGeminiModels(), id);
  EXPECT_NE(row, nullptr) << id;
  static const ModelCapabilities kNone;
  return row != nullptr ? *row : kNone;
}

std::vector<std::string> Ids(const std::vector<ModelCapabilities>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(r.id);
  return out;
}

// The reference table (docs/generation.md), row by row.
TEST(GeminiModelsTest, TheTableIsTheReferenceTable) {
  EXPECT_EQ(Ids(KnownGeminiModels()),
            (std::vector<std::string>{"gemini-3.1-flash-lite-image", "gemini-3.1-flash-image",
                                      "gemini-3.1-flash-image-preview", "gemini-3-pro-image",
                                      "gemini-3-pro-image-preview", "gemini-2.5-flash-image"}));
  const auto& ten = imaging::StandardAspectRatios();
  const auto& fourteen = imaging::AspectRatioNames();

  const ModelCapabilities& lite = Row("gemini-3.1-flash-lite-image");
  EXPECT_EQ(lite.image_sizes, std::vector<std::string>{"1K"});
  EXPECT_EQ(lite.aspect_ratios, ten);
  EXPECT_EQ(lite.thinking, Support::kYes);
  EXPECT_EQ(lite.search, Support::kNo);
  EXPECT_EQ(lite.max_input_images, 14);
  EXPECT_EQ(lite.input_token_limit, 65'536);

  for (const char* id : {"gemini-3.1-flash-image", "gemini-3.1-flash-image-preview"}) {
    const ModelCapabilities& flash = Row(id);
    EXPECT_EQ(flash.image_sizes, (std::vector<std::string>{"512", "1K", "2K", "4K"})) << id;
    EXPECT_EQ(flash.aspect_ratios, fourteen) << id;  // adds 1:4 4:1 1:8 8:1
    EXPECT_EQ(flash.thinking, Support::kYes) << id;
    EXPECT_EQ(flash.search, Support::kYes) << id;
    EXPECT_EQ(flash.input_token_limit, 131'072) << id;
  }
  for (const char* id : {"gemini-3-pro-image", "gemini-3-pro-image-preview"}) {
    const ModelCapabilities& pro = Row(id);
    EXPECT_EQ(pro.image_sizes, (std::vector<std::string>{"1K", "2K", "4K"})) << id;
    EXPECT_EQ(pro.aspect_ratios, ten) << id;
    EXPECT_EQ(pro.thinking, Support::kNo) << id;  // it always thinks; no level to choose
    EXPECT_EQ(pro.search, Support::kYes) << id;
  }
  const ModelCapabilities& old = Row("gemini-2.5-flash-image");
  EXPECT_EQ(old.image_sizes, std::vector<std::string>{"1K"});
  EXPECT_EQ(old.max_input_images, 3);
  EXPECT_EQ(old.thinking, Support::kNo);
  EXPECT_EQ(old.search, Support::kNo);
  for (const ModelCapabilities& m : KnownGeminiModels()) {
    EXPECT_EQ(m.chain, Support::kYes) << m.id;
    EXPECT_TRUE(m.listed) << m.id;
    EXPECT_GT(m.input_image_tokens, 0) << m.id;
  }
}

TEST(GeminiModelsTest, OfferedModelsPutTheDefaultFirst) {
  auto all = OfferedGeminiModels("gemini-3-pro-image", {});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), KnownGeminiModels().size());
  EXPECT_EQ(all->front().id, "gemini-3-pro-image");

  auto some = OfferedGeminiModels(
      "gemini-3.1-flash-image",
      {"gemini-2.5-flash-image", "gemini-3.1-flash-image", "gemini-2.5-flash-image"});
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(Ids(*some),
            (std::vector<std::string>{"gemini-3.1-flash-image", "gemini-2.5-flash-image"}));

  auto missing = OfferedGeminiModels("gemini-3-pro-image", {"gemini-2.5-flash-image"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("gemini-3-pro-image"), std::string::npos);
  EXPECT_NE(missing.error().message.find("--models"), std::string::npos);
}

TEST(GeminiModelsTest, AnUnlistedIdGetsWhatEveryModelTakes) {
  auto rows = OfferedGeminiModels("gemini-9-image", {});
  ASSERT_TRUE(rows.ok());
  const ModelCapabilities& row = rows->front();
  EXPECT_EQ(row.id, "gemini-9-image");
  EXPECT_FALSE(row.listed);
  EXPECT_EQ(row.image_sizes, std::vector<std::string>{"1K"});
  EXPECT_EQ(row.aspect_ratios, imaging::StandardAspectRatios());
  EXPECT_EQ(row.thinking, Support::kNo);
  EXPECT_EQ(row.search, Support::kNo);
}

TEST(GeminiModelsTest, SplitModelList) {
  EXPECT_EQ(SplitModelList(" a , b,,c "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(SplitModelList("").empty());
  EXPECT_TRUE(SplitModelList(" , ").empty());
}

}  // namespace
}  // namespace imgmcp::gemini
