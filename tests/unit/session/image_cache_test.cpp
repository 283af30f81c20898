#include "session/image_cache.h"

#include <gtest/gtest.h>

namespace imgmcp::session {
namespace {

std::shared_ptr<const std::string> Bytes(size_t n, char c) {
  return std::make_shared<const std::string>(n, c);
}

TEST(ImageCacheTest, EvictsLeastRecentlyUsedToStayWithinBudget) {
  ImageCache cache(100);
  cache.Put("s", 1, Bytes(40, 'a'));
  cache.Put("s", 2, Bytes(40, 'b'));
  ASSERT_NE(cache.Get("s", 1), nullptr);  // 1 is now more recent than 2
  cache.Put("s", 3, Bytes(40, 'c'));      // over budget: evicts 2
  EXPECT_EQ(cache.Get("s", 2), nullptr);
  ASSERT_NE(cache.Get("s", 1), nullptr);
  EXPECT_EQ(*cache.Get("s", 3), std::string(40, 'c'));
  EXPECT_EQ(cache.SizeBytes(), 80u);
  EXPECT_EQ(cache.EntryCount(), 2u);
}

TEST(ImageCacheTest, DoesNotCacheEntriesLargerThanTheBudget) {
  ImageCache cache(10);
  cache.Put("s", 1, Bytes(11, 'a'));
  EXPECT_EQ(cache.Get("s", 1), nullptr);
  EXPECT_EQ(cache.SizeBytes(), 0u);
}

TEST(ImageCacheTest, ReplacingAnEntryKeepsTheByteCountRight) {
  ImageCache cache(100);
  cache.Put("s", 1, Bytes(30, 'a'));
  cache.Put("s", 1, Bytes(50, 'b'));
  EXPECT_EQ(cache.SizeBytes(), 50u);
  EXPECT_EQ(*cache.Get("s", 1), std::string(50, 'b'));
}

TEST(ImageCacheTest, EraseSessionLeavesOtherSessionsAlone) {
  ImageCache cache(1000);
  cache.Put("a", 1, Bytes(10, 'a'));
  cache.Put("a", 2, Bytes(10, 'a'));
  cache.Put("ab", 1, Bytes(10, 'b'));  // shares a prefix with "a" but is another session
  cache.EraseSession("a");
  EXPECT_EQ(cache.Get("a", 1), nullptr);
  EXPECT_EQ(cache.Get("a", 2), nullptr);
  EXPECT_NE(cache.Get("ab", 1), nullptr);
  EXPECT_EQ(cache.SizeBytes(), 10u);
  cache.Erase("ab", 1);
  EXPECT_EQ(cache.EntryCount(), 0u);
}

TEST(ImageCacheTest, HitRequiresTheRecordedDigestToMatchWhenBothAreKnown) {
  ImageCache cache(1000);
  cache.Put("s", 1, Bytes(10, 'a'), "aaaa");
  cache.Put("s", 2, Bytes(10, 'b'));  // digest unknown
  EXPECT_NE(cache.Get("s", 1, "aaaa"), nullptr);
  EXPECT_EQ(cache.Get("s", 1, "bbbb"), nullptr);
  EXPECT_NE(cache.Get("s", 1), nullptr);  // the caller does not know the digest
  EXPECT_NE(cache.Get("s", 2, "bbbb"), nullptr);
}

}  // namespace
}  // namespace imgmcp::session
