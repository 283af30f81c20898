#include "session/file_io.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace imgmcp::session {
namespace {

using testing::ModeOf;
using testing::TempDir;

TEST(FileIoTest, EnsureDirCreatesPrivateNestedDirectories) {
  TempDir tmp;
  const auto dir = tmp.path() / "a" / "b";
  ASSERT_TRUE(EnsureDir(dir).ok());
  EXPECT_EQ(ModeOf(tmp.path() / "a") & 0077, 0);
  EXPECT_EQ(ModeOf(dir) & 0077, 0);
  EXPECT_TRUE(EnsureDir(dir).ok());  // idempotent
}

TEST(FileIoTest, EnsureDirRefusesAFileInTheWay) {
  TempDir tmp;
  ASSERT_TRUE(WriteFileDurably(tmp.path(), "f", "x", ".tmp-").ok());
  Status st = EnsureDir(tmp.path() / "f");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kFailedPrecondition);
}

TEST(FileIoTest, WriteFileDurablyWritesPrivateFileAndLeavesNoTemp) {
  TempDir tmp;
  const std::string bytes(300000, '\x7f');
  ASSERT_TRUE(WriteFileDurably(tmp.path(), "v1.png", bytes, ".tmp-").ok());
  Result<std::string> back = ReadWholeFile(tmp.path() / "v1.png");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, bytes);
  EXPECT_EQ(ModeOf(tmp.path() / "v1.png"), 0600);
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp.path())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST(FileIoTest, WriteFileDurablyReplacesAtomically) {
  TempDir tmp;
  ASSERT_TRUE(WriteFileDurably(tmp.path(), "f", "old", ".tmp-").ok());
  ASSERT_TRUE(WriteFileDurably(tmp.path(), "f", "new", ".tmp-").ok());
  EXPECT_EQ(*ReadWholeFile(tmp.path() / "f"), "new");
}

TEST(FileIoTest, WriteIntoMissingDirectoryFails) {
  TempDir tmp;
  Status st = WriteFileDurably(tmp.path() / "missing", "f", "x", ".tmp-");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kNotFound);
}

TEST(FileIoTest, ReadMissingFileIsNotFound) {
  TempDir tmp;
  Result<std::string> r = ReadWholeFile(tmp.path() / "nope");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_NE(r.error().message.find("nope"), std::string::npos);
}

TEST(FileIoTest, RemoveFileQuietlyToleratesMissingFiles) {
  TempDir tmp;
  EXPECT_TRUE(RemoveFileQuietly(tmp.path() / "nope"));
  ASSERT_TRUE(WriteFileDurably(tmp.path(), "f", "x", ".tmp-").ok());
  EXPECT_TRUE(RemoveFileQuietly(tmp.path() / "f"));
  EXPECT_FALSE(std::filesystem::exists(tmp.path() / "f"));
}

}  // namespace
}  // namespace imgmcp::session
