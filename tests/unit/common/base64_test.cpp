#include "common/base64.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace imgmcp {
namespace {

TEST(Base64Test, EncodesRfc4648Vectors) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
}

TEST(Base64Test, RoundTripsAllByteValues) {
  std::string bytes;
  for (int i = 0; i < 256 * 3 + 1; ++i) bytes.push_back(static_cast<char>(i * 7));
  auto decoded = Base64Decode(Base64Encode(bytes));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(*decoded, bytes);
}

// Bit by bit, the way RFC 4648 describes it.
std::string PlainBase64(const std::string& bytes) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (unsigned char c : bytes) {
    bits = (bits << 8) | c;
    count += 8;
    while (count >= 6) {
      count -= 6;
      out += kAlphabet[(bits >> count) & 63];
    }
  }
  if (count > 0) out += kAlphabet[(bits << (6 - count)) & 63];
  while (out.size() % 4 != 0) out += '=';
  return out;
}

std::string Bytes(size_t n, uint32_t seed) {
  std::string bytes(n, '\0');
  for (char& c : bytes) {
    seed = seed * 1664525u + 1013904223u;
    c = static_cast<char>(seed >> 24);
  }
  return bytes;
}

// The encoder takes 12 bytes per step, then 3, then the padded tail, in chunks of 12 KiB: every
// length around those steps and around a chunk's end.
TEST(Base64Test, EncodesEveryLengthAsThePlainDefinition) {
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 64; ++n) lengths.push_back(n);
  for (size_t chunks : {1, 2, 3}) {
    for (size_t n = chunks * 12288 - 16; n <= chunks * 12288 + 16; ++n) lengths.push_back(n);
  }
  lengths.push_back(1'000'003);
  for (size_t n : lengths) {
    const std::string bytes = Bytes(n, static_cast<uint32_t>(n));
    ASSERT_EQ(Base64Encode(bytes), PlainBase64(bytes)) << "length " << n;
  }
}

TEST(Base64Test, AppendsAfterWhatIsThere) {
  const std::string bytes = Bytes(40000, 7);
  std::string out = "prefix:";
  Base64EncodeAppend(bytes, out);
  EXPECT_EQ(out, "prefix:" + PlainBase64(bytes));
  std::string reserved;
  reserved.reserve(Base64EncodedSize(bytes.size()) + 2);
  const char* storage = reserved.data();
  reserved += '[';
  Base64EncodeAppend(bytes, reserved);
  reserved += ']';
  EXPECT_EQ(reserved, "[" + PlainBase64(bytes) + "]");
  EXPECT_EQ(reserved.data(), storage);  // written into the reserved storage, never moved
}

TEST(Base64Test, AcceptsMissingPaddingAndUrlSafeAlphabet) {
  EXPECT_EQ(*Base64Decode("Zm9vYg"), "foob");
  EXPECT_EQ(*Base64Decode("-_8="), *Base64Decode("+/8="));
}

TEST(Base64Test, RejectsBadCharactersAndLengths) {
  auto bad = Base64Decode("Zm9v!mFy");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.error().message.find("offset 4"), std::string::npos);
  EXPECT_FALSE(Base64Decode("Zm9vY").ok());       // 5 chars: impossible length
  EXPECT_FALSE(Base64Decode("Zm=9v").ok());       // padding in the middle
  EXPECT_FALSE(Base64Decode("Zm9v\nYmFy").ok());  // line breaks are not base64
}

TEST(Base64Test, UrlEncodingUsesTheUrlAlphabetWithoutPadding) {
  EXPECT_EQ(Base64UrlEncode(std::string("\xfb\xff\xbf", 3)), "-_-_");
  EXPECT_EQ(Base64UrlEncode("a"), "YQ");
  EXPECT_EQ(Base64UrlEncode(""), "");
}

}  // namespace
}  // namespace imgmcp
