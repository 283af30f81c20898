#include "imaging/local_backend.h"

#include <gtest/gtest.h>

#include <stop_token>
#include <string>

#include "common/sha256.h"
#include "test_images.h"

namespace imgmcp::imaging {
namespace {

using testing::At;
using testing::Solid;

EncodedImage Png(const Image& img) { return EncodedImage{testing::PngOf(img), "image/png"}; }

TEST(LocalBackendTest, NameAndModel) {
  LocalBackend backend;
  EXPECT_EQ(backend.Name(), "local");
  EXPECT_EQ(backend.Model(), "imgmcp-local-1");
}

TEST(LocalBackendTest, GenerateIsPngOfTheRatioSizeAndDeterministic) {
  LocalBackend backend;
  GenerateRequest req;
  req.prompt = "a lighthouse at dusk, teal and gold";
  req.options.aspect_ratio = "16:9";
  Result<BackendImage> a = backend.Generate(req, CallContext{});
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->mime_type, "image/png");
  Result<ImageInfo> info = ReadImageInfo(a->bytes);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->width, 1344);
  EXPECT_EQ(info->height, 768);
  EXPECT_FALSE(a->text.empty());
  Result<BackendImage> b = LocalBackend().Generate(req, CallContext{});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Sha256Hex(a->bytes), Sha256Hex(b->bytes));
}

TEST(LocalBackendTest, OffersOneModelWithEverySizeAndRatioAndIgnoresTheRest) {
  LocalBackend backend;
  ASSERT_EQ(backend.Models().size(), 1u);
  const ModelCapabilities& m = backend.Models().front();
  EXPECT_EQ(m.id, backend.Model());
  EXPECT_EQ(m.image_sizes, ImageSizeNames());
  EXPECT_EQ(m.aspect_ratios, AspectRatioNames());
  EXPECT_EQ(m.thinking, Support::kIgnored);
  EXPECT_EQ(m.search, Support::kIgnored);
  EXPECT_EQ(m.chain, Support::kIgnored);
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
    GenerateRequest req;
    req.prompt = "solid teal";
    req.options.image_size = c.size;
    req.options.aspect_ratio = c.ratio;
    Result<BackendImage> image = backend.Generate(req, CallContext{});
    ASSERT_TRUE(image.ok()) << image.error().message;
    Result<ImageInfo> info = ReadImageInfo(image->bytes);
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
  GenerateRequest big;
  big.prompt = "solid teal";
  big.options.image_size = "2K";
  Result<BackendImage> refused = LocalBackend(small).Generate(big, CallContext{});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("2048x2048"), std::string::npos);
  EXPECT_NE(refused.error().message.find("--max-pixels"), std::string::npos);
}

TEST(LocalBackendTest, EditWithImageSizeScalesKeepingTheAspect) {
  LocalBackend backend;
  EditRequest edit;
  edit.prompt = "invert";
  edit.base = Png(Solid(64, 32, Rgb{255, 0, 0}));
  edit.options.image_size = "512";
  Result<BackendImage> out = backend.Edit(edit, CallContext{});
  ASSERT_TRUE(out.ok()) << out.error().message;
  Result<ImageInfo> info = ReadImageInfo(out->bytes);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->width, 724);  // 2:1 at about 512x512 pixels
  EXPECT_EQ(info->height, 362);
  EXPECT_NE(out->text.find("scaled to image_size 512"), std::string::npos) << out->text;
  Result<Image> pixels = Decode(out->bytes);
  ASSERT_TRUE(pixels.ok());
  EXPECT_EQ(At(*pixels, 300, 200), (Rgb{0, 255, 255}));
}

TEST(LocalBackendTest, GenerateErrors) {
  LocalBackend backend;
  GenerateRequest req;
  req.prompt = "";
  EXPECT_EQ(backend.Generate(req, CallContext{}).error().code, ErrorCode::kInvalidArgument);
  req.prompt = "a cat";
  req.options.aspect_ratio = "2:1";
  Result<BackendImage> r = backend.Generate(req, CallContext{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("21:9"), std::string::npos);
  req.options.aspect_ratio = "1:1";
  req.references.push_back(EncodedImage{"not an image", "image/png"});
  r = backend.Generate(req, CallContext{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("reference image 1"), std::string::npos);
}

TEST(LocalBackendTest, ReferenceColoursJoinThePalette) {
  LocalBackend backend;
  GenerateRequest req;
  req.prompt = "an abstract piece";
  Result<BackendImage> plain = backend.Generate(req, CallContext{});
  req.references.push_back(Png(Solid(16, 16, Rgb{10, 200, 30})));
  Result<BackendImage> with_ref = backend.Generate(req, CallContext{});
  ASSERT_TRUE(plain.ok() && with_ref.ok());
  EXPECT_NE(plain->bytes, with_ref->bytes);
  EXPECT_NE(with_ref->text.find("#0ac81e"), std::string::npos) << with_ref->text;
}

TEST(LocalBackendTest, SolidRedInvertedIsCyan) {
  LocalBackend backend;
  GenerateRequest gen;
  gen.prompt = "solid red";
  Result<BackendImage> red = backend.Generate(gen, CallContext{});
  ASSERT_TRUE(red.ok());
  EditRequest edit;
  edit.prompt = "invert";
  edit.base = EncodedImage{red->bytes, red->mime_type};
  Result<BackendImage> cyan = backend.Edit(edit, CallContext{});
  ASSERT_TRUE(cyan.ok()) << cyan.error().message;
  EXPECT_EQ(cyan->mime_type, "image/png");
  Result<Image> img = Decode(cyan->bytes);
  ASSERT_TRUE(img.ok());
  ASSERT_EQ(img->width, 1024);
  for (int y = 0; y < img->height; y += 37) {
    for (int x = 0; x < img->width; x += 41) ASSERT_EQ(At(*img, x, y), (Rgb{0, 255, 255}));
  }
}

TEST(LocalBackendTest, JpegBaseIsEditedAndOutputIsPng) {
  LocalBackend backend;
  EditRequest edit;
  edit.prompt = "rotate 90, draw square black at 0,0 size 3";
  // Labelled PNG, but the bytes are JPEG: the label is ignored.
  edit.base = EncodedImage{testing::JpegOf(Solid(40, 20, Rgb{250, 250, 250}), 95), "image/png"};
  Result<BackendImage> r = backend.Edit(edit, CallContext{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->mime_type, "image/png");
  Result<Image> img = Decode(r->bytes);
  ASSERT_TRUE(img.ok());
  EXPECT_EQ(img->width, 20);
  EXPECT_EQ(img->height, 40);
  EXPECT_EQ(At(*img, 1, 1), (Rgb{0, 0, 0}));
  EXPECT_NEAR(At(*img, 10, 20).r, 250, 3);
}

TEST(LocalBackendTest, EditIsDeterministic) {
  LocalBackend backend;
  EditRequest edit;
  edit.prompt = "blur 3 then sharpen then tint orange 40%";
  edit.base = Png(testing::Photo(80, 60));
  Result<BackendImage> a = backend.Edit(edit, CallContext{});
  Result<BackendImage> b = backend.Edit(edit, CallContext{});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->bytes, b->bytes);
}

TEST(LocalBackendTest, EditErrors) {
  LocalBackend backend;
  EditRequest edit;
  edit.base = Png(Solid(10, 10, Rgb{}));
  edit.prompt = "make it look like van gogh";
  Result<BackendImage> r = backend.Edit(edit, CallContext{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("\"make it look like van gogh\""), std::string::npos);
  EXPECT_NE(r.error().message.find("draw square|circle|dot"), std::string::npos);

  edit.prompt = "crop 5,5,10,10";
  r = backend.Edit(edit, CallContext{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("outside the 10x10 image"), std::string::npos);

  edit.prompt = "invert";
  edit.base = EncodedImage{testing::CraftPng(60000, 60000, 100), "image/png"};
  r = backend.Edit(edit, CallContext{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kTooLarge);

  LocalBackendOptions options;
  options.limits.max_pixels = 50;
  LocalBackend strict(options);
  edit.base = Png(Solid(10, 10, Rgb{}));
  EXPECT_EQ(strict.Edit(edit, CallContext{}).error().code, ErrorCode::kTooLarge);
}

TEST(LocalBackendTest, CancelledBeforeWork) {
  LocalBackend backend;
  CallContext ctx;
  std::stop_source cancel;
  ctx.cancel = cancel.get_token();
  cancel.request_stop();
  GenerateRequest gen;
  gen.prompt = "solid red";
  EXPECT_EQ(backend.Generate(gen, ctx).error().code, ErrorCode::kCancelled);
  EditRequest edit;
  edit.prompt = "invert";
  edit.base = Png(Solid(4, 4, Rgb{}));
  EXPECT_EQ(backend.Edit(edit, ctx).error().code, ErrorCode::kCancelled);
}

}  // namespace
}  // namespace imgmcp::imaging
