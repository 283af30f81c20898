#include "server/oauth/jwk.h"

#include <gtest/gtest.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include <memory>
#include <string>
#include <vector>

#include "common/base64.h"
#include "server/oauth/jwt.h"

namespace imgmcp::oauth {
namespace {

struct TestKeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using TestKey = std::unique_ptr<EVP_PKEY, TestKeyFree>;

// Keys are generated once per process: RSA generation is slow, above all under sanitizers.
EVP_PKEY* Rsa2048() {
  static const TestKey key(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048}));
  return key.get();
}
EVP_PKEY* Rsa1024() {
  static const TestKey key(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{1024}));
  return key.get();
}
EVP_PKEY* EcKey(const char* curve) {
  static const TestKey p256(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  static const TestKey p384(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-384"));
  return std::string(curve) == "P-256" ? p256.get() : p384.get();
}
EVP_PKEY* P256() { return EcKey("P-256"); }
EVP_PKEY* Ed25519() {
  static const TestKey key(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
  return key.get();
}

std::string BignumParam(EVP_PKEY* key, const char* name) {
  BIGNUM* bn = nullptr;
  EXPECT_EQ(EVP_PKEY_get_bn_param(key, name, &bn), 1);
  std::string bytes(static_cast<size_t>(BN_num_bytes(bn)), '\0');
  BN_bn2bin(bn, reinterpret_cast<unsigned char*>(bytes.data()));
  BN_free(bn);
  return bytes;
}

Json RsaJwk(EVP_PKEY* key) {
  Json jwk = Json::object();
  jwk["kty"] = "RSA";
  jwk["n"] = Base64UrlEncode(BignumParam(key, OSSL_PKEY_PARAM_RSA_N));
  jwk["e"] = Base64UrlEncode(BignumParam(key, OSSL_PKEY_PARAM_RSA_E));
  return jwk;
}

// The uncompressed point 04 || x || y of an EC key, split into its coordinates.
Json EcJwk(EVP_PKEY* key, const char* crv) {
  unsigned char point[133];
  size_t length = 0;
  EXPECT_EQ(
      EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof point, &length),
      1);
  const size_t half = (length - 1) / 2;
  const std::string bytes(reinterpret_cast<const char*>(point), length);
  Json jwk = Json::object();
  jwk["kty"] = "EC";
  jwk["crv"] = crv;
  jwk["x"] = Base64UrlEncode(bytes.substr(1, half));
  jwk["y"] = Base64UrlEncode(bytes.substr(1 + half, half));
  return jwk;
}

Json OkpJwk(EVP_PKEY* key) {
  unsigned char raw[32];
  size_t length = sizeof raw;
  EXPECT_EQ(EVP_PKEY_get_raw_public_key(key, raw, &length), 1);
  Json jwk = Json::object();
  jwk["kty"] = "OKP";
  jwk["crv"] = "Ed25519";
  jwk["x"] = Base64UrlEncode(std::string(reinterpret_cast<const char*>(raw), length));
  return jwk;
}

// OpenSSL's signature of `data` with `md` (null for Ed25519); ECDSA signatures come out as DER.
std::string OpenSslSign(EVP_PKEY* key, const EVP_MD* md, std::string_view data) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  const auto* in = reinterpret_cast<const unsigned char*>(data.data());
  size_t length = 0;
  EXPECT_EQ(EVP_DigestSignInit(ctx.get(), nullptr, md, nullptr, key), 1);
  EXPECT_EQ(EVP_DigestSign(ctx.get(), nullptr, &length, in, data.size()), 1);
  std::string signature(length, '\0');
  EXPECT_EQ(EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &length,
                           in, data.size()),
            1);
  signature.resize(length);
  return signature;
}

// An ECDSA DER signature in the JWS form: R || S, 32 bytes each.
std::string DerToRaw(const std::string& der) {
  const auto* in = reinterpret_cast<const unsigned char*>(der.data());
  std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)> sig(
      d2i_ECDSA_SIG(nullptr, &in, static_cast<long>(der.size())), ECDSA_SIG_free);
  EXPECT_NE(sig, nullptr);
  std::string raw(64, '\0');
  auto* out = reinterpret_cast<unsigned char*>(raw.data());
  BN_bn2binpad(ECDSA_SIG_get0_r(sig.get()), out, 32);
  BN_bn2binpad(ECDSA_SIG_get0_s(sig.get()), out + 32, 32);
  return raw;
}

// The JWS signature `alg` makes of `data` with `key`.
std::string JwsSign(const std::string& alg, EVP_PKEY* key, std::string_view data) {
  if (alg == "EdDSA") return OpenSslSign(key, nullptr, data);
  const std::string signature = OpenSslSign(key, EVP_sha256(), data);
  return alg == "ES256" ? DerToRaw(signature) : signature;
}

Json KeySet(std::vector<Json> keys) {
  Json document = Json::object();
  document["keys"] = Json::array();
  for (Json& key : keys) document["keys"].push_back(std::move(key));
  return document;
}

// The one usable key of a set holding only `jwk`.
Jwk OnlyKey(const Json& jwk) {
  const auto keys = ParseJwks(KeySet({jwk}));
  EXPECT_TRUE(keys.ok());
  EXPECT_EQ(keys->size(), 1U) << jwk.dump();
  return keys->empty() ? Jwk{} : keys->front();
}

bool Skipped(const Json& jwk) {
  const auto keys = ParseJwks(KeySet({jwk}));
  return keys.ok() && keys->empty();
}

constexpr char kInput[] = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0";

// A good signature verifies; one flipped bit of the signature or of the input does not, and the
// refusal quotes neither.
void ExpectSignatureChecks(const std::string& alg, EVP_PKEY* private_key, const Jwk& key) {
  SCOPED_TRACE(alg);
  const std::string signature = JwsSign(alg, private_key, kInput);
  const Status good = VerifyJwsSignature(alg, key, kInput, signature);
  EXPECT_TRUE(good.ok()) << good.error().message;
  for (size_t byte : {size_t{0}, signature.size() / 2, signature.size() - 1}) {
    std::string flipped = signature;
    flipped[byte] = static_cast<char>(flipped[byte] ^ 0x10);
    const Status bad = VerifyJwsSignature(alg, key, kInput, flipped);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code, ErrorCode::kPermissionDenied);
    EXPECT_EQ(bad.error().message.find(kInput), std::string::npos);
    EXPECT_EQ(bad.error().message.find(Base64UrlEncode(flipped)), std::string::npos);
  }
  std::string input = kInput;
  input[5] = static_cast<char>(input[5] ^ 0x01);
  const Status bad_input = VerifyJwsSignature(alg, key, input, signature);
  ASSERT_FALSE(bad_input.ok());
  EXPECT_EQ(bad_input.error().code, ErrorCode::kPermissionDenied);
}

TEST(VerifyJwsSignatureTest, AcceptsGoodRs256SignaturesAndRefusesAlteredOnes) {
  ExpectSignatureChecks("RS256", Rsa2048(), OnlyKey(RsaJwk(Rsa2048())));
}

TEST(VerifyJwsSignatureTest, AcceptsGoodEs256SignaturesAndRefusesAlteredOnes) {
  ExpectSignatureChecks("ES256", P256(), OnlyKey(EcJwk(P256(), "P-256")));
}

TEST(VerifyJwsSignatureTest, AcceptsGoodEdDsaSignaturesAndRefusesAlteredOnes) {
  ExpectSignatureChecks("EdDSA", Ed25519(), OnlyKey(OkpJwk(Ed25519())));
}

TEST(VerifyJwsSignatureTest, AcceptsExactlyRs256Es256AndEdDsa) {
  EXPECT_TRUE(IsAcceptedAlgorithm("RS256"));
  EXPECT_TRUE(IsAcceptedAlgorithm("ES256"));
  EXPECT_TRUE(IsAcceptedAlgorithm("EdDSA"));
  for (const char* alg : {"none", "HS256", "RS384", "RS512", "PS256", "ES384", "ES512", "ES256K",
                          "Ed25519", "rs256", "eddsa", "RS256 ", ""}) {
    EXPECT_FALSE(IsAcceptedAlgorithm(alg)) << alg;
  }
}

TEST(VerifyJwsSignatureTest, RefusesUnacceptedAlgorithmsEvenWithAGoodSignature) {
  const Jwk key = OnlyKey(RsaJwk(Rsa2048()));
  const std::string signature = JwsSign("RS256", Rsa2048(), kInput);
  for (const char* alg : {"none", "HS256", "RS384", "ES512", ""}) {
    SCOPED_TRACE(alg);
    const Status status = VerifyJwsSignature(alg, key, kInput, signature);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_FALSE(VerifyJwsSignature("none", key, kInput, "").ok());
}

TEST(VerifyJwsSignatureTest, RefusesAnAlgorithmThatDoesNotFitTheKeyType) {
  const Jwk rsa = OnlyKey(RsaJwk(Rsa2048()));
  const Jwk ec = OnlyKey(EcJwk(P256(), "P-256"));
  const Jwk okp = OnlyKey(OkpJwk(Ed25519()));
  struct Case {
    const char* alg;
    const Jwk& key;
    EVP_PKEY* signer;
  };
  for (const Case& c :
       {Case{"RS256", ec, Rsa2048()}, Case{"ES256", rsa, P256()}, Case{"EdDSA", ec, Ed25519()},
        Case{"ES256", okp, P256()}, Case{"RS256", okp, Rsa2048()}, Case{"EdDSA", rsa, Ed25519()}}) {
    SCOPED_TRACE(c.alg);
    const Status status =
        VerifyJwsSignature(c.alg, c.key, kInput, JwsSign(c.alg, c.signer, kInput));
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(status.error().message.find("cannot be checked with"), std::string::npos);
  }
}

TEST(VerifyJwsSignatureTest, RefusesAKeyWhoseAlgNamesAnotherAlgorithm) {
  Jwk key = OnlyKey(RsaJwk(Rsa2048()));
  const std::string signature = JwsSign("RS256", Rsa2048(), kInput);
  key.alg = "RS512";
  const Status status = VerifyJwsSignature("RS256", key, kInput, signature);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(status.error().message.find("\"alg\""), std::string::npos);
  key.alg = "RS256";
  EXPECT_TRUE(VerifyJwsSignature("RS256", key, kInput, signature).ok());
}

TEST(VerifyJwsSignatureTest, UsesAKeyWhoseAlgNamesTheSameAlgorithm) {
  Json jwk = EcJwk(P256(), "P-256");
  jwk["alg"] = "ES256";
  const Jwk key = OnlyKey(jwk);
  EXPECT_EQ(key.alg, "ES256");
  EXPECT_TRUE(VerifyJwsSignature("ES256", key, kInput, JwsSign("ES256", P256(), kInput)).ok());
}

TEST(VerifyJwsSignatureTest, RefusesEs256SignaturesNotInTheRawSixtyFourByteForm) {
  const Jwk key = OnlyKey(EcJwk(P256(), "P-256"));
  const std::string der = OpenSslSign(P256(), EVP_sha256(), kInput);
  const std::string raw = DerToRaw(der);
  for (const std::string& signature :
       {der, raw.substr(0, 63), raw + '\0', '\0' + raw, std::string()}) {
    const Status status = VerifyJwsSignature("ES256", key, kInput, signature);
    ASSERT_FALSE(status.ok()) << signature.size();
    EXPECT_EQ(status.error().code, ErrorCode::kPermissionDenied);
  }
  EXPECT_TRUE(VerifyJwsSignature("ES256", key, kInput, raw).ok());
}

TEST(VerifyJwsSignatureTest, RefusesAllZeroEs256Signatures) {
  const Jwk key = OnlyKey(EcJwk(P256(), "P-256"));
  const Status status = VerifyJwsSignature("ES256", key, kInput, std::string(64, '\0'));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::kPermissionDenied);
}

TEST(VerifyJwsSignatureTest, RefusesAJwkWithoutAKey) {
  Jwk empty;
  empty.kty = "RSA";
  const Status status = VerifyJwsSignature("RS256", empty, kInput, "x");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
}

TEST(VerifyJwsSignatureTest, VerifiesAParsedCompactToken) {
  const std::string signing_input =
      Base64UrlEncode(R"({"alg":"EdDSA","kid":"ed"})") + "." + Base64UrlEncode(R"({"sub":"user"})");
  const std::string token =
      signing_input + "." + Base64UrlEncode(JwsSign("EdDSA", Ed25519(), signing_input));
  const auto jwt = ParseJwt(token);
  ASSERT_TRUE(jwt.ok()) << jwt.error().message;
  Json jwk = OkpJwk(Ed25519());
  jwk["kid"] = "ed";
  const Jwk key = OnlyKey(jwk);
  EXPECT_EQ(key.kid, jwt->kid);
  const Status status = VerifyJwsSignature(jwt->alg, key, jwt->signing_input, jwt->signature);
  EXPECT_TRUE(status.ok()) << status.error().message;
}

TEST(VerifyJwsSignatureTest, LeavesNoErrorOnOpenSslsQueue) {
  ERR_clear_error();
  const Jwk key = OnlyKey(EcJwk(P256(), "P-256"));
  EXPECT_FALSE(VerifyJwsSignature("ES256", key, kInput, std::string(64, '\x7f')).ok());
  EXPECT_FALSE(VerifyJwsSignature("EdDSA", OnlyKey(OkpJwk(Ed25519())), kInput, "short").ok());
  EXPECT_FALSE(VerifyJwsSignature("RS256", OnlyKey(RsaJwk(Rsa2048())), kInput, "short").ok());
  Json off_curve = EcJwk(P256(), "P-256");
  off_curve["y"] = off_curve["x"];
  EXPECT_TRUE(Skipped(off_curve));
  EXPECT_EQ(ERR_peek_error(), 0UL);
}

TEST(ParseJwksTest, ReadsRsaEcAndOkpKeysInOrderWithKidAndAlg) {
  Json rsa = RsaJwk(Rsa2048());
  rsa["kid"] = "rsa-1";
  rsa["use"] = "sig";
  Json ec = EcJwk(P256(), "P-256");
  ec["kid"] = "ec-1";
  ec["alg"] = "ES256";
  Json okp = OkpJwk(Ed25519());
  okp["key_ops"] = Json::array({"verify"});
  const auto keys = ParseJwks(KeySet({rsa, ec, okp}));
  ASSERT_TRUE(keys.ok()) << keys.error().message;
  ASSERT_EQ(keys->size(), 3U);
  EXPECT_EQ((*keys)[0].kid, "rsa-1");
  EXPECT_EQ((*keys)[0].kty, "RSA");
  EXPECT_EQ((*keys)[0].alg, "");
  EXPECT_EQ((*keys)[1].kid, "ec-1");
  EXPECT_EQ((*keys)[1].kty, "EC");
  EXPECT_EQ((*keys)[1].alg, "ES256");
  EXPECT_EQ((*keys)[2].kid, "");
  EXPECT_EQ((*keys)[2].kty, "OKP");
  for (const Jwk& key : *keys) EXPECT_NE(key.key, nullptr);
}

TEST(ParseJwksTest, FailsOnlyWhenTheDocumentIsNotAnObjectWithAKeysArray) {
  for (const char* text :
       {"[]", "\"keys\"", "null", "{}", R"({"keys":{}})", R"({"keys":null})", R"({"key":[]})"}) {
    const auto keys = ParseJwks(Json::parse(text));
    ASSERT_FALSE(keys.ok()) << text;
    EXPECT_EQ(keys.error().code, ErrorCode::kInvalidArgument);
  }
  const auto empty = ParseJwks(Json::parse(R"({"keys":[]})"));
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  const auto odd_members = ParseJwks(Json::parse(R"({"keys":[1,"x",null,[],{}]})"));
  ASSERT_TRUE(odd_members.ok());
  EXPECT_TRUE(odd_members->empty());
}

TEST(ParseJwksTest, SkipsSymmetricKeys) {
  EXPECT_TRUE(Skipped(Json::parse(R"({"kty":"oct","k":"c2VjcmV0","alg":"HS256"})")));
  EXPECT_TRUE(Skipped(Json::parse(R"({"kty":"oct","k":"c2VjcmV0"})")));
}

TEST(ParseJwksTest, SkipsKeysMeantForEncryption) {
  Json enc = RsaJwk(Rsa2048());
  enc["use"] = "enc";
  EXPECT_TRUE(Skipped(enc));
  Json not_string = RsaJwk(Rsa2048());
  not_string["use"] = Json::array({"sig"});
  EXPECT_TRUE(Skipped(not_string));
  Json ops = RsaJwk(Rsa2048());
  ops["key_ops"] = Json::array({"encrypt", "wrapKey"});
  EXPECT_TRUE(Skipped(ops));
}

TEST(ParseJwksTest, SkipsRsaModuliUnder2048Bits) {
  EXPECT_TRUE(Skipped(RsaJwk(Rsa1024())));
  const auto mixed = ParseJwks(KeySet({RsaJwk(Rsa1024()), RsaJwk(Rsa2048())}));
  ASSERT_TRUE(mixed.ok());
  EXPECT_EQ(mixed->size(), 1U);
}

TEST(ParseJwksTest, SkipsRsaKeysWithBadExponents) {
  for (const char* e : {"AQ", "Ag", "AAE", "AQAB="}) {  // 1, 2, 1 again, padded
    Json jwk = RsaJwk(Rsa2048());
    jwk["e"] = e;
    EXPECT_TRUE(Skipped(jwk)) << e;
  }
  Json missing = RsaJwk(Rsa2048());
  missing.erase("n");
  EXPECT_TRUE(Skipped(missing));
}

TEST(ParseJwksTest, SkipsCurvesOtherThanP256AndEd25519) {
  EXPECT_TRUE(Skipped(EcJwk(EcKey("P-384"), "P-384")));
  EXPECT_TRUE(Skipped(EcJwk(EcKey("P-384"), "P-256")));  // 48-byte coordinates
  Json wrong_name = EcJwk(P256(), "secp256k1");
  EXPECT_TRUE(Skipped(wrong_name));
  Json ed448 = OkpJwk(Ed25519());
  ed448["crv"] = "Ed448";
  EXPECT_TRUE(Skipped(ed448));
  Json x25519 = OkpJwk(Ed25519());
  x25519["crv"] = "X25519";
  EXPECT_TRUE(Skipped(x25519));
}

TEST(ParseJwksTest, SkipsMalformedEcCoordinates) {
  const Json good = EcJwk(P256(), "P-256");
  const std::string x = good["x"].get<std::string>();
  Json short_x = good;
  short_x["x"] = Base64UrlEncode(Base64UrlDecode(x)->substr(1));
  EXPECT_TRUE(Skipped(short_x));
  Json long_x = good;
  long_x["x"] = Base64UrlEncode('\0' + *Base64UrlDecode(x));
  EXPECT_TRUE(Skipped(long_x));
  Json padded = good;
  padded["x"] = x + "=";
  EXPECT_TRUE(Skipped(padded));
  Json number = good;
  number["y"] = 12;
  EXPECT_TRUE(Skipped(number));
  Json missing = good;
  missing.erase("y");
  EXPECT_TRUE(Skipped(missing));
}

TEST(ParseJwksTest, SkipsEcPointsNotOnTheCurve) {
  Json jwk = EcJwk(P256(), "P-256");
  std::string y = *Base64UrlDecode(jwk["y"].get<std::string>());
  y[31] = static_cast<char>(y[31] ^ 0x01);
  jwk["y"] = Base64UrlEncode(y);
  EXPECT_TRUE(Skipped(jwk));
  Json zero = EcJwk(P256(), "P-256");
  zero["x"] = Base64UrlEncode(std::string(32, '\0'));
  zero["y"] = Base64UrlEncode(std::string(32, '\0'));
  EXPECT_TRUE(Skipped(zero));
}

TEST(ParseJwksTest, SkipsEd25519KeysOfTheWrongLength) {
  Json jwk = OkpJwk(Ed25519());
  jwk["x"] = Base64UrlEncode(std::string(31, 'k'));
  EXPECT_TRUE(Skipped(jwk));
}

TEST(ParseJwksTest, SkipsKeysWithUnknownTypesOrNonStringMembers) {
  Json unknown = RsaJwk(Rsa2048());
  unknown["kty"] = "RSA-PSS";
  EXPECT_TRUE(Skipped(unknown));
  Json no_kty = RsaJwk(Rsa2048());
  no_kty.erase("kty");
  EXPECT_TRUE(Skipped(no_kty));
  Json kid = RsaJwk(Rsa2048());
  kid["kid"] = 3;
  EXPECT_TRUE(Skipped(kid));
  Json alg = RsaJwk(Rsa2048());
  alg["alg"] = Json::object();
  EXPECT_TRUE(Skipped(alg));
}

TEST(ParseJwksTest, SkipsKeysRestrictedToAlgorithmsNotAcceptedOrOfAnotherType) {
  for (const char* alg : {"RS384", "PS256", "HS256", "none", "ES256"}) {
    Json jwk = RsaJwk(Rsa2048());
    jwk["alg"] = alg;
    EXPECT_TRUE(Skipped(jwk)) << alg;
  }
  Json ec = EcJwk(P256(), "P-256");
  ec["alg"] = "EdDSA";
  EXPECT_TRUE(Skipped(ec));
}

TEST(ParseJwksTest, UsesThePublicPartOfKeysThatCarryPrivateMembers) {
  Json rsa = RsaJwk(Rsa2048());
  rsa["d"] = "bm90LXRoZS1yZWFsLWV4cG9uZW50";
  rsa["p"] = "cA";
  rsa["q"] = 7;
  Json ec = EcJwk(P256(), "P-256");
  ec["d"] = Base64UrlEncode(std::string(32, '\x01'));
  const auto keys = ParseJwks(KeySet({rsa, ec}));
  ASSERT_TRUE(keys.ok());
  ASSERT_EQ(keys->size(), 2U);
  EXPECT_TRUE(
      VerifyJwsSignature("RS256", (*keys)[0], kInput, JwsSign("RS256", Rsa2048(), kInput)).ok());
  EXPECT_TRUE(
      VerifyJwsSignature("ES256", (*keys)[1], kInput, JwsSign("ES256", P256(), kInput)).ok());
}

TEST(ParseJwksTest, KeepsTheUsableKeysAroundSkippedOnes) {
  const auto keys = ParseJwks(
      KeySet({Json::parse(R"({"kty":"oct","k":"AA"})"), RsaJwk(Rsa1024()), OkpJwk(Ed25519()),
              EcJwk(EcKey("P-384"), "P-384"), EcJwk(P256(), "P-256")}));
  ASSERT_TRUE(keys.ok());
  ASSERT_EQ(keys->size(), 2U);
  EXPECT_EQ((*keys)[0].kty, "OKP");
  EXPECT_EQ((*keys)[1].kty, "EC");
}

TEST(ParseJwksTest, KeysOutliveTheSetTheyCameFrom) {
  std::shared_ptr<const VerifyingKey> kept;
  {
    const auto keys = ParseJwks(KeySet({OkpJwk(Ed25519())}));
    ASSERT_TRUE(keys.ok());
    ASSERT_EQ(keys->size(), 1U);
    kept = (*keys)[0].key;
  }
  Jwk key;
  key.kty = "OKP";
  key.key = kept;
  EXPECT_TRUE(VerifyJwsSignature("EdDSA", key, kInput, JwsSign("EdDSA", Ed25519(), kInput)).ok());
}

}  // namespace
}  // namespace imgmcp::oauth
