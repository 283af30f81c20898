// {path} images: the roots they may be read from (AllowedRoots, shared with save_to's writes) and
// the resolver that reads them — on a real temporary directory tree.
#include "server/tools/image_input.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "imaging/codec.h"
#include "server/tools/rooted_write.h"
#include "server/tools/save_target.h"
#include "tests/unit/temp_dir.h"

namespace imgmcp::tools {
namespace {

using test_util::TempDir;

namespace fs = std::filesystem;

// A 4 x 4 grey PNG.
std::string GreyPng() {
  imaging::Image image;
  image.width = 4;
  image.height = 4;
  image.rgba.assign(4 * 4 * 4, 128);
  return imaging::EncodePng(image).value();
}

// tmp/ holds `images/private.png` (readable by this user, below /) and `data/`.
class ReadRootsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    fs::create_directory(images());
    fs::create_directory(data());
    std::ofstream(image(), std::ios::binary) << GreyPng();
  }
  fs::path images() const { return tmp_.path() / "images"; }
  fs::path data() const { return tmp_.path() / "data"; }
  fs::path image() const { return images() / "private.png"; }
  // A resolver as the server wires it: the working directory, the data dir, --allow-read dirs.
  static ImageInputResolver Resolver(std::vector<fs::path> roots) {
    ImageInputOptions options;
    options.allowed_roots = std::move(roots);
    return ImageInputResolver(std::move(options));
  }
  static ImageInputArg Path(const fs::path& path) {
    ImageInputArg arg;
    arg.path = path.string();
    return arg;
  }

  TempDir tmp_;
};

TEST_F(ReadRootsTest, AllowedRootsLeaveOutTheFileSystemRootAndWhatIsNoDirectory) {
  bool root_left_out = false;
  EXPECT_EQ(AllowedRoots({"/", images(), "//", images() / "..", image(), tmp_.path() / "missing"},
                         &root_left_out),
            (std::vector<fs::path>{images(), tmp_.path()}));
  EXPECT_TRUE(root_left_out);
  EXPECT_EQ(AllowedRoots({data()}, &root_left_out), std::vector<fs::path>{data()});
  EXPECT_FALSE(root_left_out);
}

// A server started in / (its working directory a root) reads nothing through it.
TEST_F(ReadRootsTest, AWorkingDirectoryOfSlashIsNoReadRoot) {
  const ImageInputResolver resolver = Resolver({"/", data()});
  EXPECT_EQ(resolver.allowed_roots(), std::vector<fs::path>{data()});
  auto read = resolver.Resolve(Path(image()), "image");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(read.error().message.find("outside the allowed directories (" + data().string() +
                                      "; / is never one)"),
            std::string::npos)
      << read.error().message;
  EXPECT_EQ(resolver.EncodedSize(Path(image())), 0u);  // not even its size is looked at
}

TEST_F(ReadRootsTest, TheDataDirAndAllowReadDirectoriesStillAre) {
  const ImageInputResolver resolver = Resolver({"/", data(), images()});
  auto read = resolver.Resolve(Path(image()), "image");
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->mime_type, "image/png");
  auto refused = Resolver({data()}).Resolve(Path(image()), "image");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message.find("/ is never one"), std::string::npos)
      << "said only where / was configured: " << refused.error().message;
}

// The same rule for save_to's writes, from the same function: / is never a write root.
TEST_F(ReadRootsTest, SlashIsNoWriteRootEither) {
  SaveOptions options;
  options.working_dir = images();
  options.roots = {"/", images()};
  options.data_dir = data();
  const SaveTargets targets(options);
  SaveArgs args;
  args.save_to = (tmp_.path() / "elsewhere.png").string();
  auto plan = targets.Plan(args, SaveSource::kStoredVersion);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().message.find("outside the directories imgmcp may write to (" +
                                      images().string() + ")"),
            std::string::npos)
      << plan.error().message;
}

}  // namespace
}  // namespace imgmcp::tools
