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

TEST(ResultTest, CarriesValueOrError) {
  auto a = Half(4);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, 2);
  auto b = Half(3);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(b.error().message, "odd");
}

TEST(ResultTest, HoldsMoveOnlyValues) {
  Result<std::unique_ptr<int>> r(std::make_unique<int>(7));
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 7);
}

TEST(StatusTest, DefaultsToOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  Status e = Error(ErrorCode::kNotFound, "x");
  EXPECT_FALSE(e.ok());
  EXPECT_STREQ(ErrorCodeName(e.error().code), "not_found");
}

Status CheckEven(int v) {
  if (v % 2) return Error(ErrorCode::kInvalidArgument, "odd");
  return Status::Ok();
}

Result<int> Quarter(int v) {
  ASSIGN_OR_RETURN(int half, Half(v));
  ASSIGN_OR_RETURN(half, Half(half));  // assigns to an existing variable
  return half;
}

Status QuarterIsEven(int v, int* out) {
  ASSIGN_OR_RETURN(*out, Quarter(v));
  RETURN_IF_ERROR(CheckEven(*out));
  RETURN_IF_ERROR(Half(*out));  // a Result works as well as a Status
  return Status::Ok();
}

Result<std::unique_ptr<int>> Boxed(int v) {
  ASSIGN_OR_RETURN(auto box, Result<std::unique_ptr<int>>(std::make_unique<int>(v)));
  RETURN_IF_ERROR(CheckEven(*box));
  return box;
}

TEST(ResultMacrosTest, ReturnTheFirstErrorAndOtherwiseCarryOn) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_EQ(Quarter(6).error().message, "odd");  // 6/2 = 3 fails the second step
  int out = 0;
  EXPECT_TRUE(QuarterIsEven(16, &out).ok());
  EXPECT_EQ(out, 4);
  Status odd = QuarterIsEven(12, &out);  // 12/4 = 3: CheckEven refuses
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(out, 3);
  EXPECT_EQ(odd.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(**Boxed(4), 4);
  EXPECT_FALSE(Boxed(5).ok());
}

TEST(WithContextTest, PutsTheContextBeforeTheMessageAndKeepsTheCode) {
  const Error cause(ErrorCode::kPermissionDenied, "cannot open /x: Permission denied");
  const Error e = WithContext(cause, "--metrics");
  EXPECT_EQ(e.code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(e.message, "--metrics: cannot open /x: Permission denied");
  // Nested contexts read outermost first.
  EXPECT_EQ(WithContext(WithContext(cause, "'save_to'"), "the copy").message,
            "the copy: 'save_to': cannot open /x: Permission denied");
  EXPECT_EQ(WithContext(Error(ErrorCode::kInternal, ""), "step").message, "step: ");
}

TEST(Sha256Test, MatchesKnownDigest) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(RandomHexTest, HasRequestedLengthAndDiffers) {
  const std::string a = RandomHex(16), b = RandomHex(16);
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(ClockTest, FormatsRfc3339) {
  using namespace std::chrono;
  EXPECT_EQ(FormatRfc3339(system_clock::time_point(milliseconds(1700000000123))),
            "2023-11-14T22:13:20.123Z");
}

}  // namespace
}  // namespace imgmcp
