#include "session/data_dir.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace imgmcp::session {
namespace {

TEST(SessionIdTest, AcceptsTheDocumentedAlphabet) {
  EXPECT_TRUE(IsValidSessionId("a"));
  EXPECT_TRUE(IsValidSessionId("Demo-1.2_x"));
  EXPECT_TRUE(IsValidSessionId("a.."));  // one path component, not a parent reference
  EXPECT_TRUE(IsValidSessionId(std::string(64, 'z')));
}

TEST(SessionIdTest, RejectsAnythingThatCouldEscapeADirectory) {
  for (const std::string& bad :
       std::vector<std::string>{"", ".", "..", "../x", "a/b", "/abs", ".hidden", "-x", "_x", "a b",
                                "a\\b", "ü", std::string(65, 'z'), std::string("a\0b", 3)}) {
    EXPECT_FALSE(IsValidSessionId(bad)) << bad;
  }
}

TEST(FileExtensionTest, OnlyShortAlphanumericExtensions) {
  EXPECT_TRUE(IsValidFileExtension(".png"));
  EXPECT_TRUE(IsValidFileExtension(".jpg"));
  for (const char* bad : {"", ".", "png", "./png", ".p/g", ".png.", ".averyverylongext"}) {
    EXPECT_FALSE(IsValidFileExtension(bad)) << bad;
  }
}

TEST(DataDirLayoutTest, PathsFollowTheDocumentedLayout) {
  const DataDirLayout layout("/d");
  EXPECT_EQ(layout.DatabasePath(), "/d/imgmcp.db");
  EXPECT_EQ(layout.SessionImageDir("s1"), "/d/images/s1");
  EXPECT_EQ(layout.SessionLockPath("s1"), "/d/locks/s1.lock");
  EXPECT_EQ(DataDirLayout::VersionFileName(12, ".jpg"), "v12.jpg");
}

}  // namespace
}  // namespace imgmcp::session
