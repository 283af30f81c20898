#include "session/file_io.h"

#include <gtest/gtest.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/vfs.h>

#include <cstdint>
#include <string>

#include "test_util.h"
#include "tests/unit/skips.h"

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
  ASSERT_TRUE(WriteFileAtomically(tmp.path(), "f", "x", ".tmp-").ok());
  Status st = EnsureDir(tmp.path() / "f");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kFailedPrecondition);
}

TEST(FileIoTest, WriteFileAtomicallyWritesPrivateFileAndLeavesNoTemp) {
  TempDir tmp;
  const std::string bytes(300000, '\x7f');
  ASSERT_TRUE(WriteFileAtomically(tmp.path(), "v1.png", bytes, ".tmp-").ok());
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

// Every byte distinct from its neighbours, so a shifted or padded block cannot compare equal.
std::string Pattern(size_t size) {
  std::string out(size, '\0');
  uint32_t x = 2463534242u;
  for (char& c : out) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<char>(x);
  }
  return out;
}

void ExpectRoundTrips(const std::filesystem::path& dir) {
  // Around the direct-I/O threshold and its 4 KiB alignment, plus an image-sized file.
  for (size_t size : {size_t{256 * 1024 - 1}, size_t{256 * 1024}, size_t{256 * 1024 + 1},
                      size_t{4096 * 700 + 123}, size_t{2'800'000}}) {
    SCOPED_TRACE("size " + std::to_string(size));
    const std::string bytes = Pattern(size);
    ASSERT_TRUE(WriteFileAtomically(dir, "big.png", bytes, ".tmp-").ok());
    EXPECT_EQ(std::filesystem::file_size(dir / "big.png"), size);
    Result<std::string> back = ReadWholeFile(dir / "big.png");
    ASSERT_TRUE(back.ok());
    EXPECT_TRUE(*back == bytes);
    EXPECT_EQ(ModeOf(dir / "big.png"), 0600);
  }
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);  // no temp file left behind
}

TEST(FileIoTest, BigFilesRoundTripExactly) {
  TempDir tmp;
  ExpectRoundTrips(tmp.path());
}

bool IsTmpfs(const std::filesystem::path& path) {
  struct statfs st {};
  return ::statfs(path.c_str(), &st) == 0 && st.f_type == TMPFS_MAGIC;
}

// A directory on a tmpfs for the test's life: below /dev/shm when that is a writable tmpfs,
// else a tmpfs of its own mounted on a temp dir (root can, as in CI); empty when neither works.
class TmpfsDir {
 public:
  TmpfsDir() {
    std::string templ = "/dev/shm/imgmcp-file-io-XXXXXX";
    if (IsTmpfs("/dev/shm") && ::mkdtemp(templ.data()) != nullptr) {
      path_ = templ;
    } else if (::mount("tmpfs", mount_point_.path().c_str(), "tmpfs", 0, "size=16m,mode=0700") ==
               0) {
      mounted_ = true;
      path_ = mount_point_.path();
    }
  }
  ~TmpfsDir() {  // before mount_point_ removes the directory
    std::error_code ec;
    if (mounted_) {
      ::umount2(path_.c_str(), MNT_DETACH);
    } else if (!path_.empty()) {
      std::filesystem::remove_all(path_, ec);
    }
  }
  TmpfsDir(const TmpfsDir&) = delete;
  TmpfsDir& operator=(const TmpfsDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  TempDir mount_point_;
  bool mounted_ = false;
  std::filesystem::path path_;
};

// tmpfs may refuse direct I/O; the write must fall back to the page cache with the same result.
TEST(FileIoTest, BigFilesRoundTripOnTmpfs) {
  TmpfsDir tmpfs;
  IMGMCP_REQUIRE(!tmpfs.path().empty(),
                 "no tmpfs: /dev/shm is not a writable tmpfs and mounting one needs root");
  ASSERT_TRUE(IsTmpfs(tmpfs.path()));
  ExpectRoundTrips(tmpfs.path());
}

TEST(FileIoTest, WriteFileAtomicallyReplacesAtomically) {
  TempDir tmp;
  ASSERT_TRUE(WriteFileAtomically(tmp.path(), "f", "old", ".tmp-").ok());
  ASSERT_TRUE(WriteFileAtomically(tmp.path(), "f", "new", ".tmp-").ok());
  EXPECT_EQ(*ReadWholeFile(tmp.path() / "f"), "new");
}

TEST(FileIoTest, WriteIntoMissingDirectoryFails) {
  TempDir tmp;
  Status st = WriteFileAtomically(tmp.path() / "missing", "f", "x", ".tmp-");
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
  ASSERT_TRUE(WriteFileAtomically(tmp.path(), "f", "x", ".tmp-").ok());
  EXPECT_TRUE(RemoveFileQuietly(tmp.path() / "f"));
  EXPECT_FALSE(std::filesystem::exists(tmp.path() / "f"));
}

}  // namespace
}  // namespace imgmcp::session
