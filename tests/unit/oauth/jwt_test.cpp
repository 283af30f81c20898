#include "server/oauth/jwt.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/base64.h"

namespace imgmcp::oauth {
namespace {

// A compact JWS of the given header, payload and signature bytes.
std::string CompactToken(std::string_view header, std::string_view payload,
                         std::string_view signature = "sig-bytes") {
  return Base64UrlEncode(header) + "." + Base64UrlEncode(payload) + "." +
         Base64UrlEncode(signature);
}

constexpr char kHeader[] = R"({"alg":"RS256","kid":"key-1","typ":"at+jwt"})";
constexpr char kPayload[] = R"({"sub":"SECRET-SUBJECT-7431","iss":"https://issuer.example"})";

// ParseJwt refuses `token` with kInvalidArgument, and its message quotes none of the token: not
// the whole, not any part, not the decoded subject.
void ExpectRefusedWithoutEcho(const std::string& token) {
  SCOPED_TRACE(token);
  const auto parsed = ParseJwt(token);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
  const std::string& message = parsed.error().message;
  EXPECT_FALSE(message.empty());
  EXPECT_EQ(message.find("SECRET-SUBJECT"), std::string::npos) << message;
  size_t start = 0;
  while (start <= token.size()) {
    size_t dot = token.find('.', start);
    if (dot == std::string::npos) dot = token.size();
    const std::string part = token.substr(start, dot - start);
    if (part.size() >= 4) {
      EXPECT_EQ(message.find(part), std::string::npos) << message;
    }
    start = dot + 1;
  }
}

TEST(Base64UrlDecodeTest, DecodesRfc4648VectorsWithoutPadding) {
  EXPECT_EQ(*Base64UrlDecode(""), "");
  EXPECT_EQ(*Base64UrlDecode("Zg"), "f");
  EXPECT_EQ(*Base64UrlDecode("Zm8"), "fo");
  EXPECT_EQ(*Base64UrlDecode("Zm9v"), "foo");
  EXPECT_EQ(*Base64UrlDecode("Zm9vYg"), "foob");
  EXPECT_EQ(*Base64UrlDecode("Zm9vYmE"), "fooba");
  EXPECT_EQ(*Base64UrlDecode("Zm9vYmFy"), "foobar");
}

TEST(Base64UrlDecodeTest, ReadsTheUrlSafeCharactersForValues62And63) {
  EXPECT_EQ(*Base64UrlDecode("-_-_"), "\xfb\xff\xbf");
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  EXPECT_EQ(*Base64UrlDecode(Base64UrlEncode(all)), all);
}

TEST(Base64UrlDecodeTest, RefusesPaddingAndTheStandardAlphabet) {
  for (const char* text : {"Zg==", "Zm8=", "Zm9v====", "+/+/", "ab+c", "ab/c"}) {
    SCOPED_TRACE(text);
    const auto decoded = Base64UrlDecode(text);
    ASSERT_FALSE(decoded.ok());
    EXPECT_EQ(decoded.error().code, ErrorCode::kInvalidArgument);
  }
}

TEST(Base64UrlDecodeTest, RefusesWhitespaceAndOtherBytes) {
  for (std::string text : {"Zm9v ", " Zm9v", "Zm\n9v", "Zm\t9v", "Zm9v\r", "Zm.v", "Zm\xc3\xa9v"}) {
    SCOPED_TRACE(text);
    EXPECT_FALSE(Base64UrlDecode(text).ok());
  }
  EXPECT_FALSE(Base64UrlDecode(std::string("Zm\0v", 4)).ok());
}

TEST(Base64UrlDecodeTest, RefusesALengthThatLeavesOneCharacterOver) {
  EXPECT_FALSE(Base64UrlDecode("Z").ok());
  EXPECT_FALSE(Base64UrlDecode("Zm9vY").ok());
}

TEST(Base64UrlDecodeTest, RefusesNonZeroUnusedTrailingBits) {
  EXPECT_TRUE(Base64UrlDecode("Zg").ok());
  EXPECT_FALSE(Base64UrlDecode("Zh").ok());  // 'h' sets one of the four unused bits
  EXPECT_TRUE(Base64UrlDecode("Zm8").ok());
  EXPECT_FALSE(Base64UrlDecode("Zm9").ok());  // "fo" again, with one of the two unused bits set
  EXPECT_FALSE(Base64UrlDecode("Zm-").ok());  // '-' (62) sets one of the two unused bits
  const auto error = Base64UrlDecode("Zh");
  EXPECT_NE(error.error().message.find("trailing bits"), std::string::npos);
}

TEST(ParseJwtTest, SplitsAValidTokenIntoHeaderClaimsAndSignature) {
  const std::string token = CompactToken(kHeader, kPayload, "\x01\x02\x03 raw");
  const auto jwt = ParseJwt(token);
  ASSERT_TRUE(jwt.ok()) << jwt.error().message;
  EXPECT_EQ(jwt->alg, "RS256");
  EXPECT_EQ(jwt->kid, "key-1");
  EXPECT_EQ(jwt->typ, "at+jwt");
  EXPECT_EQ(jwt->header, Json::parse(kHeader));
  EXPECT_EQ(jwt->claims, Json::parse(kPayload));
  EXPECT_EQ(jwt->signature, "\x01\x02\x03 raw");
  EXPECT_EQ(jwt->signing_input, token.substr(0, token.rfind('.')));
}

TEST(ParseJwtTest, LeavesKidAndTypEmptyWhenTheHeaderHasNone) {
  const auto jwt = ParseJwt(CompactToken(R"({"alg":"EdDSA"})", "{}"));
  ASSERT_TRUE(jwt.ok()) << jwt.error().message;
  EXPECT_EQ(jwt->alg, "EdDSA");
  EXPECT_EQ(jwt->kid, "");
  EXPECT_EQ(jwt->typ, "");
  EXPECT_TRUE(jwt->claims.is_object());
}

TEST(ParseJwtTest, KeepsAnUnacceptedAlgForTheVerifierToRefuse) {
  const auto jwt = ParseJwt(CompactToken(R"({"alg":"none"})", "{}"));
  ASSERT_TRUE(jwt.ok()) << jwt.error().message;
  EXPECT_EQ(jwt->alg, "none");
}

TEST(ParseJwtTest, RefusesTokensWithoutThreeParts) {
  const std::string a = Base64UrlEncode(kHeader);
  const std::string b = Base64UrlEncode(kPayload);
  ExpectRefusedWithoutEcho("");
  ExpectRefusedWithoutEcho(a);
  ExpectRefusedWithoutEcho(a + "." + b);
  ExpectRefusedWithoutEcho(a + "." + b + ".c2ln.c2ln");
  const auto four = ParseJwt(a + "." + b + ".c2ln.c2ln");
  EXPECT_NE(four.error().message.find("has 4 "), std::string::npos) << four.error().message;
}

TEST(ParseJwtTest, RefusesAnEncryptedTokenNamingJwe) {
  const std::string jwe = Base64UrlEncode(R"({"alg":"RSA-OAEP","enc":"A256GCM"})") +
                          ".ZW5jcnlwdGVka2V5.aXZpdml2.Y2lwaGVydGV4dA.dGFndGFn";
  ExpectRefusedWithoutEcho(jwe);
  EXPECT_NE(ParseJwt(jwe).error().message.find("JWE"), std::string::npos);
}

TEST(ParseJwtTest, RefusesPaddingOrTheStandardAlphabetInAnyPart) {
  const std::string a = Base64UrlEncode(R"({"alg":"RS256"})");  // 20 characters
  const std::string b = Base64UrlEncode(kPayload);
  ExpectRefusedWithoutEcho(a + "." + b + ".c2ln==");
  ExpectRefusedWithoutEcho(Base64UrlEncode(R"({"alg":"RS256" })") + "=." + b + ".c2ln");
  ExpectRefusedWithoutEcho(a + "." + b + "=.c2ln");
  ExpectRefusedWithoutEcho(a + "." + b + ".c2+l");
  ExpectRefusedWithoutEcho(a + "." + b + ".c2/l");
  ExpectRefusedWithoutEcho(a + "." + b + ".c2ln\n");
  ExpectRefusedWithoutEcho(" " + a + "." + b + ".c2ln");
}

TEST(ParseJwtTest, RefusesAHeaderThatIsNotAJsonObject) {
  ExpectRefusedWithoutEcho(CompactToken(R"({"alg":"RS256")", kPayload));
  ExpectRefusedWithoutEcho(CompactToken("not json at all", kPayload));
  ExpectRefusedWithoutEcho(CompactToken(R"(["alg","RS256"])", kPayload));
  ExpectRefusedWithoutEcho(CompactToken(R"("RS256")", kPayload));
  ExpectRefusedWithoutEcho(CompactToken("", kPayload));
  const auto parsed = ParseJwt(CompactToken(R"(["alg"])", kPayload));
  EXPECT_NE(parsed.error().message.find("header"), std::string::npos);
}

TEST(ParseJwtTest, RefusesAPayloadThatIsNotAJsonObject) {
  ExpectRefusedWithoutEcho(CompactToken(kHeader, "SECRET-SUBJECT-7431"));
  ExpectRefusedWithoutEcho(CompactToken(kHeader, R"(["SECRET-SUBJECT-7431"])"));
  ExpectRefusedWithoutEcho(CompactToken(kHeader, ""));
  ExpectRefusedWithoutEcho(CompactToken(kHeader, std::string(R"({"sub":"a)") + '\0' + R"("})"));
  const auto parsed = ParseJwt(CompactToken(kHeader, "[]"));
  EXPECT_NE(parsed.error().message.find("payload"), std::string::npos);
}

TEST(ParseJwtTest, RefusesAHeaderWithoutAStringAlg) {
  ExpectRefusedWithoutEcho(CompactToken(R"({"typ":"at+jwt"})", kPayload));
  ExpectRefusedWithoutEcho(CompactToken(R"({"alg":256})", kPayload));
  ExpectRefusedWithoutEcho(CompactToken(R"({"alg":null})", kPayload));
  EXPECT_NE(ParseJwt(CompactToken("{}", kPayload)).error().message.find("alg"), std::string::npos);
}

TEST(ParseJwtTest, RefusesKidOrTypThatAreNotStrings) {
  ExpectRefusedWithoutEcho(CompactToken(R"({"alg":"RS256","kid":7})", kPayload));
  ExpectRefusedWithoutEcho(CompactToken(R"({"alg":"RS256","typ":["at+jwt"]})", kPayload));
}

TEST(ParseJwtTest, RefusesCriticalHeaderExtensions) {
  ExpectRefusedWithoutEcho(CompactToken(R"({"alg":"RS256","crit":["exp"],"exp":1})", kPayload));
  ExpectRefusedWithoutEcho(CompactToken(R"({"alg":"RS256","crit":[]})", kPayload));
  const auto parsed = ParseJwt(CompactToken(R"({"alg":"RS256","crit":["b64"]})", kPayload));
  EXPECT_NE(parsed.error().message.find("crit"), std::string::npos);
}

TEST(ParseJwtTest, RefusesAnEmptyOrUndecodableSignature) {
  const std::string signing_input = Base64UrlEncode(kHeader) + "." + Base64UrlEncode(kPayload);
  ExpectRefusedWithoutEcho(signing_input + ".");
  ExpectRefusedWithoutEcho(signing_input + ".Zh");
  ExpectRefusedWithoutEcho(signing_input + ".Zm9vY");
}

TEST(ParseJwtTest, AcceptsATokenOfExactlyTheLimitAndRefusesOneByteMore) {
  std::string token;
  // Each byte of filler adds 4/3 of a character: start a little under the limit.
  for (size_t filler = kMaxTokenBytes * 3 / 4 - 200; token.size() != kMaxTokenBytes; ++filler) {
    const std::string payload = R"({"pad":")" + std::string(filler, 'a') + R"("})";
    for (const char* signature : {"s", "si", "sig"}) {
      token = CompactToken(kHeader, payload, signature);
      if (token.size() == kMaxTokenBytes) break;
    }
    ASSERT_LT(token.size(), kMaxTokenBytes + 8);
  }
  EXPECT_TRUE(ParseJwt(token).ok());
  ExpectRefusedWithoutEcho(token + "A");
  const auto oversize = ParseJwt(std::string(kMaxTokenBytes * 4, 'A'));
  ASSERT_FALSE(oversize.ok());
  EXPECT_NE(oversize.error().message.find("longer than"), std::string::npos);
}

}  // namespace
}  // namespace imgmcp::oauth
