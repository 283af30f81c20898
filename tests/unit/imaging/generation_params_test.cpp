#include "imaging/generation_params.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace imgmcp::imaging {
namespace {

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

ModelCapabilities Row(std::string id, std::vector<std::string> sizes,
                      std::vector<std::string> ratios, Support thinking, Support search,
                      int max_images = 14) {
  ModelCapabilities m;
  m.id = std::move(id);
  m.image_sizes = std::move(sizes);
  m.aspect_ratios = std::move(ratios);
  m.thinking = thinking;
  if (thinking == Support::kYes) m.thinking_levels = {"minimal", "high"};
  if (thinking == Support::kIgnored) m.thinking_levels = ThinkingLevelNames();
  m.search = search;
  m.chain = Support::kYes;
  m.max_input_images = max_images;
  return m;
}

// A table shaped like Gemini's: a 1K-only default, a model with every size and ratio (and three
// thinking levels), one with a few input images and nothing optional.
std::vector<ModelCapabilities> Table() {
  ModelCapabilities flash =
      Row("flash", ImageSizeNames(), AspectRatioNames(), Support::kYes, Support::kYes);
  flash.thinking_levels = {"minimal", "medium", "high"};
  return {Row("lite", {"1K"}, StandardAspectRatios(), Support::kYes, Support::kNo), flash,
          Row("old", {"1K"}, StandardAspectRatios(), Support::kNo, Support::kNo, 3)};
}

TEST(GenerationParamsTest, Vocabulary) {
  EXPECT_EQ(ImageSizeNames(), (std::vector<std::string>{"512", "1K", "2K", "4K"}));
  EXPECT_EQ(AspectRatioNames().size(), 14u);
  EXPECT_EQ(StandardAspectRatios(),
            (std::vector<std::string>{"1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16",
                                      "16:9", "21:9"}));
  EXPECT_EQ(std::vector<std::string>(AspectRatioNames().begin() + 10, AspectRatioNames().end()),
            (std::vector<std::string>{"1:4", "4:1", "1:8", "8:1"}));
  EXPECT_EQ(ThinkingLevelNames(), (std::vector<std::string>{"minimal", "low", "medium", "high"}));
  EXPECT_EQ(ModelStatusName(ModelStatus::kGa), "ga");
  EXPECT_EQ(ModelStatusName(ModelStatus::kPreview), "preview");
  EXPECT_EQ(ModelStatusName(ModelStatus::kRetired), "retired");
}

TEST(GenerationParamsTest, PixelSizesPerSizeAndRatio) {
  struct Case {
    const char* size;
    const char* ratio;
    int width, height;
  };
  const Case cases[] = {
      {"1K", "1:1", 1024, 1024},  {"1K", "16:9", 1344, 768}, {"1K", "21:9", 1536, 672},
      {"1K", "1:4", 512, 2048},   {"1K", "4:1", 2048, 512},  {"1K", "1:8", 384, 3072},
      {"1K", "8:1", 3072, 384},   {"512", "1:1", 512, 512},  {"512", "2:3", 416, 624},
      {"512", "1:8", 192, 1536},  {"2K", "1:1", 2048, 2048}, {"2K", "16:9", 2688, 1536},
      {"2K", "4:5", 1792, 2304},  {"4K", "1:1", 4096, 4096}, {"4K", "9:16", 3072, 5376},
      {"4K", "8:1", 12288, 1536},
  };
  for (const Case& c : cases) {
    Result<ImageSize> s = PixelSize(c.size, c.ratio);
    ASSERT_TRUE(s.ok()) << c.size << " " << c.ratio;
    EXPECT_EQ(s->width, c.width) << c.size << " " << c.ratio;
    EXPECT_EQ(s->height, c.height) << c.size << " " << c.ratio;
  }
  // Every pair is defined and keeps the 1K table's shape.
  for (const std::string& size : ImageSizeNames()) {
    for (const std::string& ratio : AspectRatioNames()) {
      Result<ImageSize> s = PixelSize(size, ratio);
      Result<ImageSize> base = PixelSize("1K", ratio);
      ASSERT_TRUE(s.ok() && base.ok());
      EXPECT_EQ(static_cast<int64_t>(s->width) * base->height,
                static_cast<int64_t>(s->height) * base->width)
          << size << " " << ratio;
    }
  }
  Result<ImageSize> bad = PixelSize("3K", "1:1");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Has(bad.error().message, "512, 1K, 2K, 4K")) << bad.error().message;
  bad = PixelSize("1K", "2:1");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Has(bad.error().message, "\"2:1\"")) << bad.error().message;
  EXPECT_TRUE(Has(bad.error().message, "1:8, 8:1")) << bad.error().message;
}

TEST(GenerationParamsTest, ScaleToImageSizeKeepsTheAspect) {
  Result<ImageSize> s = ScaleToImageSize(1344, 768, "2K");
  ASSERT_TRUE(s.ok());
  EXPECT_NEAR(static_cast<double>(s->width) / s->height, 1344.0 / 768, 0.01);
  EXPECT_NEAR(static_cast<double>(s->width) * s->height, 2048.0 * 2048, 2048.0 * 8);
  s = ScaleToImageSize(100, 100, "512");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->width, 512);
  EXPECT_EQ(s->height, 512);
  s = ScaleToImageSize(1, 10000, "512");  // a sliver keeps at least one pixel across
  ASSERT_TRUE(s.ok());
  EXPECT_GE(s->width, 1);
  EXPECT_FALSE(ScaleToImageSize(0, 5, "1K").ok());
  EXPECT_FALSE(ScaleToImageSize(5, 5, "8K").ok());
}

TEST(GenerationParamsTest, AcceptsWhatTheModelSupportsAndDefaultsToTheFirstRow) {
  const auto table = Table();
  GenerationOptions o;
  const ModelCapabilities* chosen = nullptr;
  ASSERT_TRUE(CheckGenerationOptions(table, o, &chosen).ok());
  EXPECT_EQ(chosen->id, "lite");
  o.model = "flash";
  o.image_size = "4K";
  o.aspect_ratio = "8:1";
  o.thinking = "medium";
  o.search = true;
  o.chain = true;
  o.input_images = 14;
  std::vector<std::string> ignored = {"stale"};
  ASSERT_TRUE(CheckGenerationOptions(table, o, &chosen, &ignored).ok());
  EXPECT_EQ(chosen->id, "flash");
  EXPECT_TRUE(ignored.empty());
}

TEST(GenerationParamsTest, EveryRejectionNamesTheModelAndWhatItSupports) {
  const auto table = Table();
  struct Case {
    GenerationOptions options;
    std::vector<std::string> says;
  };
  auto opts = [](std::string model, auto&& fill) {
    GenerationOptions o;
    o.model = std::move(model);
    fill(o);
    return o;
  };
  const Case cases[] = {
      {opts("nope", [](auto&) {}), {"model \"nope\" is not offered", "lite, flash, old"}},
      {opts("lite", [](auto& o) { o.image_size = "2K"; }),
       {"model lite does not support image_size 2K", "it supports 1K only", "offered by flash"}},
      {opts("", [](auto& o) { o.image_size = "512"; }),
       {"model lite does not support image_size 512", "offered by flash"}},
      {opts("lite", [](auto& o) { o.image_size = "3K"; }),
       {"image_size \"3K\" is not one of 512, 1K, 2K, 4K"}},
      {opts("old", [](auto& o) { o.aspect_ratio = "1:8"; }),
       {"model old does not support aspect_ratio 1:8", "1:1 2:3", "21:9", "offered by flash"}},
      {opts("old", [](auto& o) { o.aspect_ratio = "2:1"; }), {"aspect_ratio \"2:1\" is not one"}},
      {opts("old", [](auto& o) { o.thinking = "high"; }),
       {"model old does not take a thinking level", "offered by lite and flash"}},
      {opts("lite", [](auto& o) { o.thinking = "medium"; }),
       {"model lite does not take thinking medium: it takes minimal or high",
        "(offered by flash)"}},
      {opts("lite", [](auto& o) { o.thinking = "max"; }),
       {"thinking \"max\" is not one of minimal, low, medium, high"}},
      {opts("lite", [](auto& o) { o.search = true; }),
       {"model lite does not support search", "offered by flash"}},
      {opts("old", [](auto& o) { o.input_images = 4; }),
       {"model old takes at most 3 input images", "this request has 4"}},
  };
  for (const Case& c : cases) {
    Status s = CheckGenerationOptions(table, c.options);
    ASSERT_FALSE(s.ok()) << c.says.front();
    EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
    for (const std::string& part : c.says) {
      EXPECT_TRUE(Has(s.error().message, part)) << s.error().message << "\n  lacks: " << part;
    }
  }
  ModelCapabilities no_chain = table[0];
  no_chain.chain = Support::kNo;
  GenerationOptions chain;
  chain.chain = true;
  Status s = CheckGenerationOptions({no_chain}, chain);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Has(s.error().message, "does not support context \"chain\"")) << s.error().message;
  EXPECT_EQ(CheckGenerationOptions({}, chain).error().code, ErrorCode::kInternal);
}

TEST(GenerationParamsTest, IgnoredParametersAreAcceptedAndListed) {
  ModelCapabilities offline =
      Row("offline", ImageSizeNames(), AspectRatioNames(), Support::kIgnored, Support::kIgnored);
  offline.chain = Support::kIgnored;
  GenerationOptions o;
  o.thinking = "minimal";
  o.search = true;
  o.chain = true;
  std::vector<std::string> ignored;
  ASSERT_TRUE(CheckGenerationOptions({offline}, o, nullptr, &ignored).ok());
  EXPECT_EQ(ignored, (std::vector<std::string>{"thinking", "search", "context chain"}));
}

TEST(GenerationParamsTest, DescribeModelSaysWhatItTakes) {
  const auto table = Table();
  const std::string lite = DescribeModel(table[0]);
  EXPECT_TRUE(Has(lite, "lite: image_size 1K; aspect_ratio 1:1 2:3")) << lite;
  EXPECT_TRUE(Has(lite, "thinking minimal|high; no search")) << lite;
  EXPECT_TRUE(Has(DescribeModel(table[1]), "thinking minimal|medium|high; search"));
  EXPECT_TRUE(Has(DescribeModel(table[2]), "up to 3 input images; no thinking level"));
  ModelCapabilities retired = table[2];
  retired.status = ModelStatus::kRetired;
  retired.retired_on = "2026-10-02";
  retired.replacement = "lite";
  EXPECT_TRUE(Has(DescribeModel(retired), "; retired on 2026-10-02 (use lite)"))
      << DescribeModel(retired);
  EXPECT_EQ(OutputImageTokens(table[0], "1K"), 0);  // not stated
  retired.output_image_tokens = {{"1K", 1290}};
  EXPECT_EQ(OutputImageTokens(retired, ""), 1290);
  EXPECT_EQ(OutputImageTokens(retired, "1K"), 1290);
  EXPECT_EQ(OutputImageTokens(retired, "2K"), 0);
  EXPECT_EQ(JoinList({"a", "b", "c"}), "a, b or c");
  EXPECT_EQ(JoinList({"a"}), "a");
}

}  // namespace
}  // namespace imgmcp::imaging
