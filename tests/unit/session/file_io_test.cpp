#include "session/file_io.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <string>

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

// tmpfs may refuse direct I/O; the write must fall back to the page cache with the same result.
TEST(FileIoTest, BigFilesRoundTripOnTmpfs) {
  std::string templ = "/dev/shm/imgmcp-file-io-XXXXXX";
  if (!std::filesystem::is_directory("/dev/shm") || ::mkdtemp(templ.data()) == nullptr) {
    GTEST_SKIP() << "no writable /dev/shm";
  }
  const std::filesystem::path dir(templ);
  ExpectRoundTrips(dir);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
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
