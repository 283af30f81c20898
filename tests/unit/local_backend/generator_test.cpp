#include "local_backend/generator.h"

#include <gtest/gtest.h>

#include <string>

#include "common/sha256.h"
#include "tests/unit/imaging/test_images.h"

namespace imgmcp::local {
namespace {

TEST(GeneratorTest, SizesFollowGeminis1kTable) {
  const std::pair<const char*, imaging::ImageSize> table[] = {
      {"1:1", {1024, 1024}}, {"2:3", {832, 1248}}, {"3:2", {1248, 832}}, {"3:4", {864, 1184}},
      {"4:3", {1184, 864}},  {"4:5", {896, 1152}}, {"5:4", {1152, 896}}, {"9:16", {768, 1344}},
      {"16:9", {1344, 768}}, {"21:9", {1536, 672}}};
  for (const auto& [ratio, size] : table) {
    Result<imaging::ImageSize> s = SizeForAspectRatio(ratio);
    ASSERT_TRUE(s.ok()) << ratio;
    EXPECT_EQ(s->width, size.width) << ratio;
    EXPECT_EQ(s->height, size.height) << ratio;
  }
}

TEST(GeneratorTest, UnknownRatioListsAllowed) {
  Result<imaging::ImageSize> s = SizeForAspectRatio("7:5");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(s.error().message.find("\"7:5\""), std::string::npos);
  EXPECT_NE(s.error().message.find("1:1, 2:3, 3:2, 3:4, 4:3, 4:5, 5:4, 9:16, 16:9, 21:9"),
            std::string::npos)
      << s.error().message;
}

TEST(GeneratorTest, Fnv1aKnownVectors) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ULL);
}

TEST(GeneratorTest, SolidColourIsUniform) {
  for (const char* prompt : {"solid red", "SOLID Red", "  solid #ff0000 please", "Solid red."}) {
    Result<GeneratedImage> g = GenerateImage(prompt, 64, 32);
    ASSERT_TRUE(g.ok()) << prompt << ": " << g.error().message;
    for (size_t i = 0; i < g->image.rgba.size(); i += 4) {
      ASSERT_EQ(g->image.rgba[i], 255);
      ASSERT_EQ(g->image.rgba[i + 1], 0);
      ASSERT_EQ(g->image.rgba[i + 2], 0);
      ASSERT_EQ(g->image.rgba[i + 3], 255);
    }
  }
  Result<GeneratedImage> bad = GenerateImage("solid blurple", 8, 8);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.error().message.find("blurple"), std::string::npos);
}

TEST(GeneratorTest, EmptyPromptIsInvalid) {
  for (const char* prompt : {"", "   \n"}) {
    Result<GeneratedImage> g = GenerateImage(prompt, 8, 8);
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.error().code, ErrorCode::kInvalidArgument);
  }
}

TEST(GeneratorTest, PaletteComesFromNamedColours) {
  // The background gradient starts at the first named colour: the image is dominated by red and
  // blue hues, never by green.
  Result<GeneratedImage> g = GenerateImage("red and blue", 256, 256);
  ASSERT_TRUE(g.ok());
  EXPECT_NE(g->description.find("#ff0000, #0000ff"), std::string::npos) << g->description;
  uint64_t r = 0, gr = 0, b = 0;
  for (size_t i = 0; i < g->image.rgba.size(); i += 4) {
    r += g->image.rgba[i];
    gr += g->image.rgba[i + 1];
    b += g->image.rgba[i + 2];
  }
  EXPECT_GT(r, gr);
  EXPECT_GT(b, gr);
}

TEST(GeneratorTest, DifferentPromptsDifferentImages) {
  Result<GeneratedImage> a = GenerateImage("a calm sea", 128, 128);
  Result<GeneratedImage> b = GenerateImage("a calm sea!", 128, 128);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->image.rgba, b->image.rgba);
}

// Golden hashes: any nondeterminism or unintended change to generation or PNG encoding fails here.
// Pixel hashes pin the drawing; PNG hashes also pin the encoder (filters, zlib level 4, and the
// zlib build). If a change is intended, regenerate them and say so in the commit.
TEST(GeneratorTest, GoldenImages) {
  struct Golden {
    const char* prompt;
    int w, h;
    const char* pixels_sha256;
    const char* png_sha256;
  };
  const Golden goldens[] = {
      {"a sunset over the sea in orange and purple", 1024, 1024,
       "1e8c8527d1656c32c7acbc5876f0c4c8c63b0df88ecdda3a177ee45de4ec2e61",
       "01f516a77e2df14b81a769609bce3c220cb6365b19bab7f631714ae3031a1158"},
      {"circles", 1344, 768, "e948825d611a43c9c02e561ce0b56fdbe2fa825e3aed41e77c401809386da68f",
       "2f7e3b8d3d3a4d2ce3de0c7aec9ce8fe2bd6b4b1c968145c98a80b5a40e1314c"},
      {"solid cornflowerblue", 64, 64,
       "e8c835d18993ac746fda0c1186cfb219d365578ef1a8cded89f2688633e5b8a8",
       "c47cbf406ee6697c9374214b23144979acccffae645eda87525b4221c32fd6b3"},
  };
  for (const Golden& g : goldens) {
    Result<GeneratedImage> img = GenerateImage(g.prompt, g.w, g.h);
    ASSERT_TRUE(img.ok());
    const std::string pixels(img->image.rgba.begin(), img->image.rgba.end());
    EXPECT_EQ(Sha256Hex(pixels), g.pixels_sha256) << g.prompt;
    EXPECT_EQ(Sha256Hex(imaging::EncodePng(img->image).value()), g.png_sha256) << g.prompt;
  }
}

}  // namespace
}  // namespace imgmcp::local
