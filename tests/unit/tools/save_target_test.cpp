// save_to: the arguments' form, the plan made before any backend call (roots, the data dir, what
// already exists), and the write below a root that cannot be escaped, converted, atomic and
// never replacing unless asked — on a real temporary directory tree.
#include "server/tools/save_target.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "imaging/codec.h"
#include "server/tools/rooted_write.h"
#include "tests/unit/temp_dir.h"

namespace imgmcp::tools {
namespace {

using test_util::TempDir;

namespace fs = std::filesystem;

// A w x h gradient, encoded as PNG.
std::string Png(int w, int h) {
  imaging::Image image;
  image.width = w;
  image.height = h;
  image.rgba.resize(static_cast<size_t>(w) * h * 4);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = image.Pixel(x, y);
      p[0] = static_cast<uint8_t>(x * 255 / w);
      p[1] = static_cast<uint8_t>(y * 255 / h);
      p[2] = 60;
      p[3] = 255;
    }
  }
  return imaging::EncodePng(image).value();
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Every entry below `dir`, for "nothing was written there" checks.
std::vector<fs::path> Entries(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) out.push_back(e.path());
  return out;
}

// No temp file of a save is left anywhere below `dir`.
bool NoTempFiles(const fs::path& dir) {
  for (const fs::path& p : Entries(dir)) {
    if (p.filename().string().rfind(".imgmcp-save-", 0) == 0) return false;
  }
  return true;
}

SaveArgs To(std::string save_to) {
  SaveArgs args;
  args.save_to = std::move(save_to);
  return args;
}

std::string CheckError(const SaveArgs& args) {
  Status s = args.Check("");
  EXPECT_FALSE(s.ok());
  return s.ok() ? "" : s.error().message;
}

// sandbox/ work/ (the working directory and a root) data/ (the data dir) outside/ (no root)
class SaveTargetsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    for (const char* d : {"work", "data", "outside"}) fs::create_directory(tmp_.path() / d);
  }
  fs::path work() const { return tmp_.path() / "work"; }
  fs::path outside() const { return tmp_.path() / "outside"; }
  SaveOptions Options() const {
    SaveOptions o;
    o.working_dir = work();
    o.roots = {work()};
    o.data_dir = tmp_.path() / "data";
    return o;
  }
  Result<SavePlan> PlanOf(const SaveTargets& targets, const SaveArgs& args) {
    auto plan = targets.Plan(args, SaveSource::kStoredVersion);
    if (!plan.ok()) return plan.error();
    EXPECT_TRUE(plan->has_value());
    return **plan;
  }

  TempDir tmp_;
  const std::string png_ = Png(40, 30);
};

TEST(SaveArgsTest, CompanionsNeedSaveTo) {
  SaveArgs args;
  EXPECT_TRUE(args.Check("").ok());
  args.save_format = "png";
  EXPECT_EQ(CheckError(args),
            "'save_format' goes with 'save_to' (a file path, or a directory ending in '/'), "
            "which is missing");
  args = SaveArgs();
  args.overwrite = true;
  EXPECT_NE(CheckError(args).find("'overwrite' goes with 'save_to'"), std::string::npos);
}

TEST(SaveArgsTest, TheExtensionAndTheFormatMustAgree) {
  SaveArgs args = To("a/hero.png");
  args.save_format = "jpeg";
  EXPECT_EQ(CheckError(args),
            "'save_to' ends in .png but 'save_format' is \"jpeg\"; give a name ending in the "
            "save_format's extension, or leave save_format out");
  args.save_to = "a/hero.JPG";
  EXPECT_TRUE(args.Check("").ok());
  args.save_to = "a/hero.bmp";
  EXPECT_NE(CheckError(args).find("ends in .bmp, which names no image format"), std::string::npos);
  args.save_to = "a/hero";  // no extension: the format decides
  EXPECT_TRUE(args.Check("").ok());
}

TEST(SaveArgsTest, QualityIsForJpegAndWebp) {
  SaveArgs args = To("hero.png");
  args.save_quality = 50;
  EXPECT_NE(CheckError(args).find("'save_quality' applies to jpeg and webp"), std::string::npos);
  args.save_to = "out/";  // the version's own format: unknown before the call
  EXPECT_FALSE(args.Check("").ok());
  args.save_to = "hero.webp";
  EXPECT_TRUE(args.Check("").ok());
  args.save_to = "out/";
  args.save_format = "jpeg";
  EXPECT_TRUE(args.Check("").ok());
}

TEST(SaveArgsTest, PathsWithDotDotOrNulAreRefused) {
  EXPECT_NE(CheckError(To("../x.png")).find("'save_to' contains '..'"), std::string::npos);
  EXPECT_NE(CheckError(To("a/../../x.png")).find("'..'"), std::string::npos);
  EXPECT_NE(CheckError(To(std::string("a\0b.png", 7))).find("NUL"), std::string::npos);
  EXPECT_NE(CheckError(To("")).find("'save_to' is empty"), std::string::npos);
  EXPECT_NE(CheckError(To(std::string(300, 'x') + ".png")).find("at most 255"), std::string::npos);
}

TEST(SaveArgsTest, RelativePathsStartAtTheWorkingDirectory) {
  auto request = ParseSaveRequest(To("./assets/./hero.PNG"), "/srv/site");
  ASSERT_TRUE(request.ok()) << request.error().message;
  EXPECT_EQ(request->components, (std::vector<std::string>{"srv", "site", "assets", "hero.PNG"}));
  EXPECT_FALSE(request->directory);
  EXPECT_EQ(request->format, imaging::ImageFormat::kPng);
  auto dir = ParseSaveRequest(To("/abs//out/"), "/srv/site");
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(dir->components, (std::vector<std::string>{"abs", "out"}));
  EXPECT_TRUE(dir->directory);
  EXPECT_FALSE(dir->format.has_value());
}

TEST_F(SaveTargetsTest, PathsOutsideEveryRootAndTheDataDirAreRefused) {
  SaveTargets targets(Options());
  auto outside_root = targets.Plan(To((outside() / "x.png").string()), SaveSource::kStoredVersion);
  ASSERT_FALSE(outside_root.ok());
  EXPECT_EQ(outside_root.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(outside_root.error().message.find("outside the directories imgmcp may write to (" +
                                              work().string() + ")"),
            std::string::npos);
  auto data = targets.Plan(To((tmp_.path() / "data" / "images" / "x.png").string()),
                           SaveSource::kStoredVersion);
  ASSERT_FALSE(data.ok());
  EXPECT_NE(data.error().message.find("inside imgmcp's data directory"), std::string::npos);
  EXPECT_FALSE(targets.Plan(To("/etc/passwd.png"), SaveSource::kStoredVersion).ok());
  EXPECT_TRUE(Entries(outside()).empty());
}

TEST_F(SaveTargetsTest, AWorkingDirectoryInsideTheDataDirWritesNothing) {
  SaveOptions o = Options();
  o.data_dir = tmp_.path();  // every root lies inside it
  SaveTargets targets(o);
  auto plan = targets.Plan(To("x.png"), SaveSource::kStoredVersion);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().message.find("data directory"), std::string::npos);
}

TEST_F(SaveTargetsTest, TheDeepestRootHoldsThePlan) {
  fs::create_directories(work() / "site" / "img");
  SaveOptions o = Options();
  o.roots.push_back(work() / "site");
  SaveTargets targets(o);
  auto plan = PlanOf(targets, To("site/img/new/hero.png"));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->root, work() / "site");
  EXPECT_EQ(plan->dirs, (std::vector<std::string>{"img", "new"}));
  EXPECT_EQ(plan->name, "hero.png");
  EXPECT_FALSE(fs::exists(work() / "site" / "img" / "new"));  // planning creates nothing
}

TEST_F(SaveTargetsTest, WhatExistsIsCheckedBeforeAnyCall) {
  SaveTargets targets(Options());
  WriteFile(work() / "taken.png", "old");
  auto taken = targets.Plan(To("taken.png"), SaveSource::kStoredVersion);
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.error().code, ErrorCode::kConflict);
  EXPECT_NE(taken.error().message.find("already exists; pass overwrite: true"), std::string::npos);
  SaveArgs replace = To("taken.png");
  replace.overwrite = true;
  EXPECT_TRUE(targets.Plan(replace, SaveSource::kStoredVersion).ok());

  ASSERT_EQ(::mkfifo((work() / "fifo.png").c_str(), 0600), 0);
  replace.save_to = "fifo.png";
  auto fifo = targets.Plan(replace, SaveSource::kStoredVersion);
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.error().message.find("is a FIFO; only regular files"), std::string::npos);

  fs::create_directory(work() / "assets");
  auto dir = targets.Plan(To("assets"), SaveSource::kStoredVersion);
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.error().message.find("is a directory; end save_to with '/'"), std::string::npos);
  EXPECT_TRUE(targets.Plan(To("assets/"), SaveSource::kStoredVersion).ok());
  EXPECT_EQ(ReadFile(work() / "taken.png"), "old");
}

TEST_F(SaveTargetsTest, SymlinksAreNeverFollowed) {
  SaveTargets targets(Options());
  fs::create_directory_symlink(outside(), work() / "linkdir");
  fs::create_symlink(outside() / "x.png", work() / "link.png");
  fs::create_directory(work() / "real");
  fs::create_directory_symlink(work() / "real", work() / "inner");  // even one inside the root
  for (const char* path :
       {"linkdir/x.png", "linkdir/sub/x.png", "link.png", "inner/x.png", "linkdir/"}) {
    SaveArgs args = To(path);
    args.overwrite = true;
    auto plan = targets.Plan(args, SaveSource::kStoredVersion);
    ASSERT_FALSE(plan.ok()) << path;
    EXPECT_NE(plan.error().message.find("symbolic link"), std::string::npos) << path;
  }
  EXPECT_TRUE(Entries(outside()).empty());
}

TEST_F(SaveTargetsTest, SavesCreateDirectoriesAndLeaveNoTempFiles) {
  SaveTargets targets(Options());
  auto plan = PlanOf(targets, To("assets/img/hero.png"));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  auto saved = targets.Save(*plan, "s1", 3, png_);
  ASSERT_TRUE(saved.ok()) << saved.error().message;
  EXPECT_EQ(saved->path, work() / "assets" / "img" / "hero.png");
  EXPECT_EQ(saved->bytes, static_cast<int64_t>(png_.size()));
  EXPECT_EQ(saved->format, imaging::ImageFormat::kPng);
  EXPECT_FALSE(saved->replaced);
  EXPECT_EQ(ReadFile(saved->path), png_);  // the version's own bytes, not re-encoded
  EXPECT_TRUE(NoTempFiles(work()));

  auto dir = PlanOf(targets, To("assets/"));
  ASSERT_TRUE(dir.ok());
  auto named = targets.Save(*dir, "s1", 3, png_);
  ASSERT_TRUE(named.ok()) << named.error().message;
  EXPECT_EQ(named->path, work() / "assets" / "s1-v3.png");
}

TEST_F(SaveTargetsTest, ConvertedCopiesDecodeAtTheSameSize) {
  SaveTargets targets(Options());
  struct Case {
    const char* save_to;
    std::optional<std::string> format;
    imaging::ImageFormat expected;
  };
  for (const Case& c : {Case{"c.jpg", std::nullopt, imaging::ImageFormat::kJpeg},
                        Case{"c.webp", "webp", imaging::ImageFormat::kWebp},
                        Case{"out/", "jpeg", imaging::ImageFormat::kJpeg},
                        Case{"c-none", "webp", imaging::ImageFormat::kWebp}}) {
    SaveArgs args = To(c.save_to);
    args.save_format = c.format;
    args.save_quality = 70;
    auto plan = PlanOf(targets, args);
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    auto saved = targets.Save(*plan, "s", 1, png_);
    ASSERT_TRUE(saved.ok()) << saved.error().message;
    const std::string bytes = ReadFile(saved->path);
    EXPECT_EQ(imaging::SniffFormat(bytes), c.expected) << c.save_to;
    auto info = imaging::ReadImageInfo(bytes);
    ASSERT_TRUE(info.ok()) << c.save_to;
    EXPECT_EQ(info->width, 40);
    EXPECT_EQ(info->height, 30);
    EXPECT_TRUE(imaging::Decode(bytes).ok()) << c.save_to;
  }
  EXPECT_TRUE(fs::exists(work() / "out" / "s-v1.jpg"));
}

TEST_F(SaveTargetsTest, AGifNameIsRefusedForANewVersionAndAllowedForAStoredOne) {
  SaveTargets targets(Options());
  // generate_image and edit_image: refused by the plan, before any backend call or commit.
  for (const char* name : {"anim.gif", "sub/ANIM.GIF"}) {
    auto refused = targets.Plan(To(name), SaveSource::kNewVersion);
    ASSERT_FALSE(refused.ok()) << name;
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument) << name;
    const std::string& message = refused.error().message;
    EXPECT_EQ(message.rfind("'save_to' ends in .", 0), 0u) << message;
    EXPECT_NE(message.find("a new version is never a GIF"), std::string::npos) << message;
    EXPECT_NE(message.find("use .png, .jpg or .webp"), std::string::npos) << message;
  }
  EXPECT_TRUE(targets.Plan(To("still.png"), SaveSource::kNewVersion).ok());
  EXPECT_TRUE(Entries(work()).empty());

  // get_image: a stored GIF version (an import) is saved as .gif with its own bytes.
  const std::string gif(
      "GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00"
      "\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x01"
      "D\x00;",
      43);
  ASSERT_EQ(imaging::SniffFormat(gif), imaging::ImageFormat::kGif);
  auto plan = targets.Plan(To("anim.gif"), SaveSource::kStoredVersion);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_TRUE(plan->has_value());
  EXPECT_EQ((*plan)->format, imaging::ImageFormat::kGif);
  auto saved = targets.Save(**plan, "s", 1, gif);
  ASSERT_TRUE(saved.ok()) << saved.error().message;
  EXPECT_EQ(saved->format, imaging::ImageFormat::kGif);
  EXPECT_EQ(saved->path, work() / "anim.gif");
  EXPECT_EQ(ReadFile(work() / "anim.gif"), gif);
}

TEST_F(SaveTargetsTest, AGifNameNeedsAGifVersion) {
  SaveTargets targets(Options());
  auto plan = PlanOf(targets, To("anim.gif"));
  ASSERT_TRUE(plan.ok());
  auto saved = targets.Save(*plan, "s", 1, png_);
  ASSERT_FALSE(saved.ok());
  EXPECT_NE(saved.error().message.find("imgmcp does not write GIF"), std::string::npos);
  EXPECT_FALSE(fs::exists(work() / "anim.gif"));
}

TEST_F(SaveTargetsTest, OverwriteReplacesAtomicallyAndOnlyWhenAsked) {
  SaveTargets targets(Options());
  auto plan = PlanOf(targets, To("hero.png"));
  ASSERT_TRUE(plan.ok());
  WriteFile(work() / "hero.png", "appeared after the plan");
  auto kept = targets.Save(*plan, "s", 1, png_);
  ASSERT_FALSE(kept.ok());
  EXPECT_EQ(kept.error().code, ErrorCode::kConflict);
  EXPECT_EQ(ReadFile(work() / "hero.png"), "appeared after the plan");
  plan->overwrite = true;
  auto replaced = targets.Save(*plan, "s", 1, png_);
  ASSERT_TRUE(replaced.ok()) << replaced.error().message;
  EXPECT_TRUE(replaced->replaced);
  EXPECT_EQ(ReadFile(work() / "hero.png"), png_);
  EXPECT_TRUE(NoTempFiles(work()));
}

TEST_F(SaveTargetsTest, AFullDiskLeavesNothingBehind) {
  SaveOptions o = Options();
  o.fail_writes_with = ENOSPC;
  SaveTargets targets(o);
  auto plan = PlanOf(targets, To("full/hero.png"));
  ASSERT_TRUE(plan.ok());
  auto saved = targets.Save(*plan, "s", 1, png_);
  ASSERT_FALSE(saved.ok());
  EXPECT_EQ(saved.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(saved.error().message.find("No space left on device"), std::string::npos);
  EXPECT_FALSE(fs::exists(work() / "full" / "hero.png"));
  EXPECT_TRUE(NoTempFiles(work()));
}

// A directory swapped for a symlink to the outside while a save runs: after the walk the write
// goes to the directory that was opened (now moved, still inside the root); before it, the walk
// refuses the symlink. Either way nothing lands outside.
TEST_F(SaveTargetsTest, ASwappedDirectoryNeverLeadsOutside) {
  fs::create_directory(work() / "assets");
  for (const char* point : {"before-write", "before-walk"}) {
    SCOPED_TRACE(point);
    fs::create_directory(work() / "assets");
    SaveOptions o = Options();
    o.pause = [&, point](std::string_view at) {
      if (at != point) return;
      fs::rename(work() / "assets", work() / ("moved-" + std::string(point)));
      fs::create_directory_symlink(outside(), work() / "assets");
    };
    SaveTargets targets(o);
    auto plan = PlanOf(targets, To("assets/hero.png"));
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    auto saved = targets.Save(*plan, "s", 1, png_);
    if (std::string(point) == "before-write") {
      ASSERT_TRUE(saved.ok()) << saved.error().message;
      EXPECT_EQ(ReadFile(work() / "moved-before-write" / "hero.png"), png_);
    } else {
      ASSERT_FALSE(saved.ok());
      EXPECT_NE(saved.error().message.find("symbolic link"), std::string::npos);
    }
    EXPECT_TRUE(Entries(outside()).empty());
    fs::remove(work() / "assets");
  }
}

TEST_F(SaveTargetsTest, TheDataDirIsRefusedHoweverItIsReached) {
  fs::create_directory(work() / "store");
  SaveOptions o = Options();
  o.data_dir = work() / "store";
  SaveTargets targets(o);
  EXPECT_FALSE(targets.Plan(To("store/x.png"), SaveSource::kStoredVersion).ok());
  // Reached by its identity, not its name (as through a bind mount): the walk refuses it.
  auto walk = WalkBelowRoot(work(), {"store"}, WalkMode::kCreate, IdentityOf(work() / "store"));
  ASSERT_FALSE(walk.ok());
  EXPECT_NE(walk.error().message.find("data directory"), std::string::npos);
}

TEST_F(SaveTargetsTest, TwentyConcurrentSavesToOneName) {
  SaveTargets targets(Options());
  for (bool overwrite : {false, true}) {
    SCOPED_TRACE(overwrite ? "overwrite" : "no overwrite");
    SaveArgs args = To(overwrite ? "race/replaced.png" : "race/once.png");
    args.overwrite = overwrite;
    auto plan = PlanOf(targets, args);
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    std::atomic<int> ok{0};
    std::atomic<int> conflicts{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 20; ++i) {
      threads.emplace_back([&] {
        auto saved = targets.Save(*plan, "s", 1, png_);
        if (saved.ok()) ++ok;
        if (!saved.ok() && saved.error().code == ErrorCode::kConflict) ++conflicts;
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(ok.load(), overwrite ? 20 : 1);
    EXPECT_EQ(conflicts.load(), overwrite ? 0 : 19);
    EXPECT_EQ(ReadFile(work() / "race" / (overwrite ? "replaced.png" : "once.png")), png_);
  }
  EXPECT_TRUE(NoTempFiles(work()));
}

}  // namespace
}  // namespace imgmcp::tools
