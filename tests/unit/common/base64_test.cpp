#include "common/base64.h"

#include <gtest/gtest.h>

#include <string>

namespace imgmcp {
namespace {

TEST(Base64, EncodesRfc4648Vectors) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
}

TEST(Base64, RoundTripsAllByteValues) {
  std::string bytes;
  for (int i = 0; i < 256 * 3 + 1; ++i) bytes.push_back(static_cast<char>(i * 7));
  auto decoded = Base64Decode(Base64Encode(bytes));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(*decoded, bytes);
}

TEST(Base64, AcceptsMissingPaddingAndUrlSafeAlphabet) {
  EXPECT_EQ(*Base64Decode("Zm9vYg"), "foob");
  EXPECT_EQ(*Base64Decode("-_8="), *Base64Decode("+/8="));
}

TEST(Base64, RejectsBadCharactersAndLengths) {
  auto bad = Base64Decode("Zm9v!mFy");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.error().message.find("offset 4"), std::string::npos);
  EXPECT_FALSE(Base64Decode("Zm9vY").ok());      // 5 chars: impossible length
  EXPECT_FALSE(Base64Decode("Zm=9v").ok());      // padding in the middle
  EXPECT_FALSE(Base64Decode("Zm9v\nYmFy").ok());  // line breaks are not base64
}

}  // namespace
}  // namespace imgmcp
