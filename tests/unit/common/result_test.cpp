#include "common/result.h"

#include <gtest/gtest.h>

#include <memory>

#include "common/clock.h"
#include "common/random.h"
#include "common/sha256.h"

namespace imgmcp {
namespace {

Result<int> Half(int v) {
  if (v % 2) return Error(ErrorCode::kInvalidArgument, "odd");
  return v / 2;
}

TEST(Result, CarriesValueOrError) {
  auto a = Half(4);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, 2);
  auto b = Half(3);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(b.error().message, "odd");
}

TEST(Result, HoldsMoveOnlyValues) {
  Result<std::unique_ptr<int>> r(std::make_unique<int>(7));
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 7);
}

TEST(Status, DefaultsToOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  Status e = Error(ErrorCode::kNotFound, "x");
  EXPECT_FALSE(e.ok());
  EXPECT_STREQ(ErrorCodeName(e.error().code), "not_found");
}

TEST(Sha256, MatchesKnownDigest) {
  EXPECT_EQ(Sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(RandomHex, HasRequestedLengthAndDiffers) {
  const std::string a = RandomHex(16), b = RandomHex(16);
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(Clock, FormatsRfc3339) {
  using namespace std::chrono;
  EXPECT_EQ(FormatRfc3339(system_clock::time_point(milliseconds(1700000000123))),
            "2023-11-14T22:13:20.123Z");
}

}  // namespace
}  // namespace imgmcp
