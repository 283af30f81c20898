// TextSeal: a sealed text opens only for its purpose, under its key, unaltered and before its
// expiry; each refusal has its own code.
#include "common/text_seal.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/unit/manual_clock.h"

namespace imgmcp {
namespace {

constexpr std::chrono::seconds kHour{3600};

TEST(TextSealTest, OpensForItsPurposeUnderItsKey) {
  const TextSeal seal("key");
  const std::string sealed = seal.Seal("links", "{\"s\":\"fox\"}", kHour);
  EXPECT_EQ(seal.Open("links", sealed).value(), "{\"s\":\"fox\"}");
  EXPECT_EQ(TextSeal("key").Open("links", sealed).value(), "{\"s\":\"fox\"}");  // a replica
  EXPECT_EQ(seal.Open("state", sealed).error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(TextSeal("other").Open("links", sealed).error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(TextSeal("").Open("links", TextSeal("").Seal("links", "x", kHour)).error().code,
            ErrorCode::kPermissionDenied);  // no key given: one of the process's own
}

TEST(TextSealTest, RefusesAlteredAndMalformedSeals) {
  const TextSeal seal("key");
  const std::string sealed = seal.Seal("links", "payload", kHour);
  std::string later = sealed;
  later[0] = later[0] == '9' ? '8' : '9';  // the expiry, pushed or pulled
  std::string text = sealed;
  text[sealed.find('.') + 1] ^= 1;
  for (const std::string& bad : {later, text, sealed.substr(0, sealed.size() - 1)}) {
    EXPECT_EQ(seal.Open("links", bad).error().code, ErrorCode::kPermissionDenied) << bad;
  }
  for (const std::string bad : {"", ".", "payload", "1.2"}) {
    EXPECT_EQ(seal.Open("links", bad).error().code, ErrorCode::kInvalidArgument) << bad;
  }
}

TEST(TextSealTest, ExpiresAfterItsTtl) {
  test_util::ManualClock clock;
  const TextSeal seal("key", &clock);
  const std::string sealed = seal.Seal("links", "x", std::chrono::seconds(60));
  clock.Advance(std::chrono::seconds(59));
  EXPECT_TRUE(seal.Open("links", sealed).ok());
  clock.Advance(std::chrono::seconds(2));
  EXPECT_EQ(seal.Open("links", sealed).error().code, ErrorCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace imgmcp
