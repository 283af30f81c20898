#include "local_backend/local_backend.h"

#include <gtest/gtest.h>

#include <stop_token>
#include <string>

#include "common/sha256.h"
#include "tests/unit/imaging/test_images.h"

namespace imgmcp::local {
namespace {

using imaging::testing::At;
using imaging::testing::Solid;

imaging::EncodedImage Png(const imaging::Image& img) {
  return imaging::EncodedImage{imaging::testing::PngOf(img), "image/png"};
}

TEST(LocalBackendTest, NameAndModel) {
  LocalBackend backend;
  EXPECT_EQ(backend.Name(), "local");
  EXPECT_EQ(backend.Model(), "imgmcp-local-1");
}

TEST(LocalBackendTest, GenerateIsPngOfTheRatioSizeAndDeterministic) {
  LocalBackend backend;
  imaging::GenerateRequest req;
  req.prompt = "a lighthouse at dusk, teal and gold";
  req.options.aspect_ratio = "16:9";
  Result<imaging::BackendImage> a = backend.Generate(req, imaging::CallContext{});
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->mime_type, "image/png");
  Result<imaging::ImageInfo> info = imaging::ReadImageInfo(a->bytes);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->width, 1344);
  EXPECT_EQ(info->height, 768);
  EXPECT_FALSE(a->text.empty());
  Result<imaging::BackendImage> b = LocalBackend().Generate(req, imaging::CallContext{});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Sha256Hex(a->bytes), Sha256Hex(b->bytes));
}

TEST(LocalBackendTest, OffersOneModelWithEverySizeAndRatioAndIgnoresTheRest) {
  LocalBackend backend;
  ASSERT_EQ(backend.Models().size(), 1u);
  const imaging::ModelCapabilities& m = backend.Models().front();
  EXPECT_EQ(m.id, backend.Model());
  EXPECT_EQ(m.image_sizes, imaging::ImageSizeNames());
  EXPECT_EQ(m.aspect_ratios, imaging::AspectRatioNames());
  EXPECT_EQ(m.thinking, imaging::Support::kIgnored);
  EXPECT_EQ(m.search, imaging::Support::kIgnored);
  EXPECT_EQ(m.chain, imaging::Support::kIgnored);
}

TEST(LocalBackendTest, GenerateHonoursImageSizeAndTheExtremeRatios) {
  LocalBackend backend;
  struct Case {
    const char* size;
    const char* ratio;
    int width, height;
  };
  for (const Case& c :
       {Case{"512", "8:1", 1536, 192}, Case{"512", "1:4", 256, 1024},
        Case{"2K", "16:9", 2688, 1536}, Case{"", "1:8", 384, 3072}, Case{"512", "", 512, 512}}) {
    imaging::GenerateRequest req;
    req.prompt = "solid teal";
    req.options.image_size = c.size;
    req.options.aspect_ratio = c.ratio;
    Result<imaging::BackendImage> image = backend.Generate(req, imaging::CallContext{});
    ASSERT_TRUE(image.ok()) << image.error().message;
    Result<imaging::ImageInfo> info = imaging::ReadImageInfo(image->bytes);
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(info->width, c.width) << c.size << " " << c.ratio;
    EXPECT_EQ(info->height, c.height) << c.size << " " << c.ratio;
    EXPECT_NE(image->text.find(std::to_string(c.width) + "x" + std::to_string(c.height)),
              std::string::npos)
        << image->text;
  }
  // Above the pixel limit is an error, before any drawing.
  LocalBackendOptions small;
  small.limits.max_pixels = 1024 * 1024;
  imaging::GenerateRequest big;
  big.prompt = "solid teal";
  big.options.image_size = "2K";
  Result<imaging::BackendImage> refused = LocalBackend(small).Generate(big, imaging::CallContext{});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("2048x2048"), std::string::npos);
  EXPECT_NE(refused.error().message.find("--max-pixels"), std::string::npos);
}

TEST(LocalBackendTest, EditWithImageSizeScalesKeepingTheAspect) {
  LocalBackend backend;
  imaging::EditRequest edit;
  edit.prompt = "invert";
  edit.base = Png(Solid(64, 32, Rgb{255, 0, 0}));
  edit.options.image_size = "512";
  Result<imaging::BackendImage> out = backend.Edit(edit, imaging::CallContext{});
  ASSERT_TRUE(out.ok()) << out.error().message;
  Result<imaging::ImageInfo> info = imaging::ReadImageInfo(out->bytes);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->width, 724);  // 2:1 at about 512x512 pixels
  EXPECT_EQ(info->height, 362);
  EXPECT_NE(out->text.find("scaled to image_size 512"), std::string::npos) << out->text;
  Result<imaging::Image> pixels = imaging::Decode(out->bytes);
  ASSERT_TRUE(pixels.ok());
  EXPECT_EQ(At(*pixels, 300, 200), (Rgb{0, 255, 255}));
}

TEST(LocalBackendTest, GenerateErrors) {
  LocalBackend backend;
  imaging::GenerateRequest req;
  req.prompt = "";
  EXPECT_EQ(backend.Generate(req, imaging::CallContext{}).error().code,
            ErrorCode::kInvalidArgument);
  req.prompt = "a cat";
  req.options.aspect_ratio = "2:1";
  Result<imaging::BackendImage> r = backend.Generate(req, imaging::CallContext{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("21:9"), std::string::npos);
  req.options.aspect_ratio = "1:1";
  req.references.push_back(imaging::EncodedImage{"not an image", "image/png"});
  r = backend.Generate(req, imaging::CallContext{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("reference image 1"), std::string::npos);
}

TEST(LocalBackendTest, ReferenceColoursJoinThePalette) {
  LocalBackend backend;
  imaging::GenerateRequest req;
  req.prompt = "an abstract piece";
  Result<imaging::BackendImage> plain = backend.Generate(req, imaging::CallContext{});
  req.references.push_back(Png(Solid(16, 16, Rgb{10, 200, 30})));
  Result<imaging::BackendImage> with_ref = backend.Generate(req, imaging::CallContext{});
  ASSERT_TRUE(plain.ok() && with_ref.ok());
  EXPECT_NE(plain->bytes, with_ref->bytes);
  EXPECT_NE(with_ref->text.find("#0ac81e"), std::string::npos) << with_ref->text;
}

TEST(LocalBackendTest, SolidRedInvertedIsCyan) {
  LocalBackend backend;
  imaging::GenerateRequest gen;
  gen.prompt = "solid red";
  Result<imaging::BackendImage> red = backend.Generate(gen, imaging::CallContext{});
  ASSERT_TRUE(red.ok());
  imaging::EditRequest edit;
  edit.prompt = "invert";
  edit.base = imaging::EncodedImage{red->bytes, red->mime_type};
  Result<imaging::BackendImage> cyan = backend.Edit(edit, imaging::CallContext{});
  ASSERT_TRUE(cyan.ok()) << cyan.error().message;
  EXPECT_EQ(cyan->mime_type, "image/png");
  Result<imaging::Image> img = imaging::Decode(cyan->bytes);
  ASSERT_TRUE(img.ok());
  ASSERT_EQ(img->width, 1024);
  for (int y = 0; y < img->height; y += 37) {
    for (int x = 0; x < img->width; x += 41) ASSERT_EQ(At(*img, x, y), (Rgb{0, 255, 255}));
  }
}

TEST(LocalBackendTest, JpegBaseIsEditedAndOutputIsPng) {
  LocalBackend backend;
  imaging::EditRequest edit;
  edit.prompt = "rotate 90, draw square black at 0,0 size 3";
  // Labelled PNG, but the bytes are JPEG: the label is ignored.
  edit.base = imaging::EncodedImage{imaging::testing::JpegOf(Solid(40, 20, Rgb{250, 250, 250}), 95),
                                    "image/png"};
  Result<imaging::BackendImage> r = backend.Edit(edit, imaging::CallContext{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->mime_type, "image/png");
  Result<imaging::Image> img = imaging::Decode(r->bytes);
  ASSERT_TRUE(img.ok());
  EXPECT_EQ(img->width, 20);
  EXPECT_EQ(img->height, 40);
  EXPECT_EQ(At(*img, 1, 1), (Rgb{0, 0, 0}));
  EXPECT_NEAR(At(*img, 10, 20).r, 250, 3);
}

TEST(LocalBackendTest, EditIsDeterministic) {
  LocalBackend backend;
  imaging::EditRequest edit;
  edit.prompt = "blur 3 then sharpen then tint orange 40%";
  edit.base = Png(imaging::testing::Photo(80, 60));
  Result<imaging::BackendImage> a = backend.Edit(edit, imaging::CallContext{});
  Result<imaging::BackendImage> b = backend.Edit(edit, imaging::CallContext{});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->bytes, b->bytes);
}

TEST(LocalBackendTest, EditErrors) {
  LocalBackend backend;
  imaging::EditRequest edit;
  edit.base = Png(Solid(10, 10, Rgb{}));
  edit.prompt = "make it look like van gogh";
  Result<imaging::BackendImage> r = backend.Edit(edit, imaging::CallContext{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("\"make it look like van gogh\""), std::string::npos);
  EXPECT_NE(r.error().message.find("draw square|circle|dot"), std::string::npos);

  edit.prompt = "crop 5,5,10,10";
  r = backend.Edit(edit, imaging::CallContext{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("outside the 10x10 image"), std::string::npos);

  edit.prompt = "invert";
  edit.base = imaging::EncodedImage{imaging::testing::CraftPng(60000, 60000, 100), "image/png"};
  r = backend.Edit(edit, imaging::CallContext{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kTooLarge);

  LocalBackendOptions options;
  options.limits.max_pixels = 50;
  LocalBackend strict(options);
  edit.base = Png(Solid(10, 10, Rgb{}));
  EXPECT_EQ(strict.Edit(edit, imaging::CallContext{}).error().code, ErrorCode::kTooLarge);
}

TEST(LocalBackendTest, CancelledBeforeWork) {
  LocalBackend backend;
  imaging::CallContext ctx;
  std::stop_source cancel;
  ctx.cancel = cancel.get_token();
  cancel.request_stop();
  imaging::GenerateRequest gen;
  gen.prompt = "solid red";
  EXPECT_EQ(backend.Generate(gen, ctx).error().code, ErrorCode::kCancelled);
  imaging::EditRequest edit;
  edit.prompt = "invert";
  edit.base = Png(Solid(4, 4, Rgb{}));
  EXPECT_EQ(backend.Edit(edit, ctx).error().code, ErrorCode::kCancelled);
}

// --- The memory estimate (GenerateMemory, EditMemory) --------------------------------------------

size_t Frame(int width, int height) { return static_cast<size_t>(width) * height * 4; }

// A frame and the PNG written from it, which reserves about one more frame: what the end of any
// call holds.
void ExpectEndsWithPngOf(const imaging::WorkMemory& memory, int width, int height) {
  EXPECT_EQ(memory.output.width, width);
  EXPECT_EQ(memory.output.height, height);
  EXPECT_GE(memory.answer, Frame(width, height));
  EXPECT_LE(memory.answer, Frame(width, height) + Frame(width, height) / 500 + 16384);
  EXPECT_GE(memory.peak, Frame(width, height) + memory.answer);
}

TEST(LocalBackendMemory, AGenerationHoldsItsFrameAndThePngWrittenFromIt) {
  LocalBackend backend;
  imaging::GenerationOptions options;
  imaging::WorkMemory plain = *backend.GenerateMemory(options, {});
  ExpectEndsWithPngOf(plain, 1024, 1024);  // 1K at 1:1 by default
  EXPECT_EQ(plain.peak, Frame(1024, 1024) + plain.answer);
  options.image_size = "4K";
  imaging::WorkMemory big = *backend.GenerateMemory(options, {});
  ExpectEndsWithPngOf(big, 4096, 4096);
  EXPECT_GT(big.peak, 128u << 20);  // what a 64 MB budget cannot hold
  EXPECT_LT(big.peak, 130u << 20);
  options.aspect_ratio = "16:9";
  ExpectEndsWithPngOf(*backend.GenerateMemory(options, {}), 5376, 3072);
}

TEST(LocalBackendMemory, ReferencesLargerThanTheImageMadeAreDecodedTwiceOver) {
  LocalBackend backend;
  imaging::GenerationOptions options;
  options.image_size = "512";
  imaging::WorkMemory small_refs = *backend.GenerateMemory(options, {{64, 64}, {100, 100}});
  EXPECT_EQ(small_refs.peak, backend.GenerateMemory(options, {})->peak);
  imaging::WorkMemory big_ref = *backend.GenerateMemory(options, {{64, 64}, {6000, 4000}});
  EXPECT_EQ(big_ref.peak, 2 * Frame(6000, 4000));  // the decoder's frame and its copy
  EXPECT_EQ(big_ref.output.width, 512);
}

TEST(LocalBackendMemory, AGenerationOverThePixelLimitMakesNothing) {
  LocalBackendOptions limited;
  limited.limits.max_pixels = 1'000'000;
  imaging::GenerationOptions options;
  options.image_size = "2K";
  imaging::WorkMemory refused = *LocalBackend(limited).GenerateMemory(options, {});
  EXPECT_EQ(refused.output.width, 0);
  EXPECT_LE(refused.peak, 16384u);
}

TEST(LocalBackendMemory, AnEditFollowsItsOperationsFromSizeToSize) {
  LocalBackend backend;
  imaging::GenerationOptions options;
  // In place: decoding the base (two frames) is the most it holds.
  imaging::WorkMemory invert = *backend.EditMemory("invert, grayscale", {1000, 800}, options);
  ExpectEndsWithPngOf(invert, 1000, 800);
  EXPECT_GE(invert.peak, 2 * Frame(1000, 800));
  ExpectEndsWithPngOf(*backend.EditMemory("rotate 90", {1000, 800}, options), 800, 1000);
  ExpectEndsWithPngOf(*backend.EditMemory("rotate 180; flip horizontal", {1000, 800}, options),
                      1000, 800);
  // Growing: the old frame beside the new, then the new one's PNG.
  imaging::WorkMemory grown = *backend.EditMemory("resize 200%", {1000, 800}, options);
  ExpectEndsWithPngOf(grown, 2000, 1600);
  // Cropped first: the resize starts from the small frame.
  imaging::WorkMemory cropped =
      *backend.EditMemory("crop 0,0,100,100 then resize 5000x5000", {3000, 3000}, options);
  ExpectEndsWithPngOf(cropped, 5000, 5000);
  EXPECT_EQ(cropped.peak, Frame(5000, 5000) + cropped.answer);
  // Then the scaling to image_size.
  options.image_size = "4K";
  ExpectEndsWithPngOf(*backend.EditMemory("blur 3", {1000, 1000}, options), 4096, 4096);
}

TEST(LocalBackendMemory, RefusedStepsCountAsNone) {
  LocalBackend backend;
  imaging::GenerationOptions options;
  // Not in the vocabulary: refused before the call, so only the base counts.
  imaging::WorkMemory unknown =
      *backend.EditMemory("make it look like a watercolour", {1000, 800}, options);
  ExpectEndsWithPngOf(unknown, 1000, 800);
  EXPECT_EQ(unknown.peak, Frame(1000, 800) + unknown.answer);
  // A resize over the pixel limit is refused when it comes.
  ExpectEndsWithPngOf(*backend.EditMemory("resize 10000x10000", {1000, 800}, options), 1000, 800);
}

}  // namespace
}  // namespace imgmcp::local
