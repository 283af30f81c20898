// What an image call leases on --max-inflight-mb for its backend work and result
// (server/tools/call_memory.h): the allowance for a remote answer, and the larger of the
// backend's peak and the answer with the result's image block.
#include "server/tools/call_memory.h"

#include <gtest/gtest.h>

namespace imgmcp::tools {
namespace {

constexpr size_t kMB = 1u << 20;

TEST(CallMemoryTest, EncodedImagesCountWithTheirBase64) {
  EXPECT_EQ(EncodedBytes(0), 0u);
  EXPECT_EQ(EncodedBytes(3), 3u + 4u);
  EXPECT_EQ(EncodedBytes(3 * kMB), 7 * kMB);
}

TEST(CallMemoryTest, ARemoteAnswerIsAllowedThreeBytesAPixelAndItsBodyTwice) {
  imaging::DecodeLimits limits;  // --max-image-bytes 64 MB
  const imaging::WorkMemory one_k = RemoteAnswerMemory({1024, 1024}, limits);
  EXPECT_EQ(one_k.answer, 3 * kMB);
  // The body (the answer's base64 and the JSON around it) while it grows, then the image.
  EXPECT_EQ(one_k.peak, 2 * (4 * kMB + 256 * 1024) + 3 * kMB);
  EXPECT_EQ(one_k.output.width, 1024);
  // A 4K answer would be 48 MB at 3 bytes a pixel: under the 64 MB an image may have.
  EXPECT_EQ(RemoteAnswerMemory({4096, 4096}, limits).answer, 48 * kMB);
  // Never more than an answer may be: a larger one is refused (and its body cut short).
  limits.max_bytes = 8 * kMB;
  const imaging::WorkMemory capped = RemoteAnswerMemory({4096, 4096}, limits);
  EXPECT_EQ(capped.answer, 8 * kMB);
  EXPECT_LT(capped.peak, 32 * kMB);
}

TEST(CallMemoryTest, TheResultsImageBlockCountsAfterTheBackend) {
  imaging::WorkMemory work;
  work.peak = 10 * kMB;
  work.answer = 3 * kMB;
  work.output = {1024, 1024};
  EXPECT_EQ(WorkBytes(work, InlineMode::kNone), 10 * kMB);  // the backend's peak is more
  // A preview decodes the answer: one frame beside it.
  EXPECT_EQ(WorkBytes(work, InlineMode::kPreview), 10 * kMB);
  work.peak = 5 * kMB;
  EXPECT_EQ(WorkBytes(work, InlineMode::kPreview), 3 * kMB + 4 * kMB);
  EXPECT_EQ(WorkBytes(work, InlineMode::kFull), 3 * kMB + 4 * kMB);  // its base64
  EXPECT_EQ(WorkBytes(work, InlineMode::kNone), 5 * kMB);
}

}  // namespace
}  // namespace imgmcp::tools
