// Vertex AI's endpoint rules, the location table, NO_PROXY matching and proxy URLs, Application
// Default Credentials file checks, and the service-account JWT (signed with OpenSSL, verified
// with the public half).
#include "gemini_client/vertex.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include "common/base64.h"
#include "common/json.h"
#include "gemini_client/adc.h"
#include "gemini_client/oauth_sources.h"
#include "gemini_client/proxy.h"
#include "gemini_client/proxy_probe.h"

namespace imgmcp::gemini {
namespace {

TEST(VertexTest, HostsAndPathsFollowTheLocation) {
  EXPECT_EQ(DefaultVertexBaseUrl("global"), "https://aiplatform.googleapis.com");
  EXPECT_EQ(DefaultVertexBaseUrl("us-central1"), "https://us-central1-aiplatform.googleapis.com");
  VertexTarget t{"my-project", "global", false};
  EXPECT_EQ(VertexGeneratePath(t, "m"),
            "/v1/projects/my-project/locations/global/publishers/google/models/m:generateContent");
  t.express = true;
  EXPECT_EQ(VertexGeneratePath(t, "m"), "/v1/publishers/google/models/m:generateContent");
}

TEST(VertexTest, ProjectAndLocationAreChecked) {
  EXPECT_TRUE(ValidateVertexTarget({"my-project", "global", false}).ok());
  EXPECT_TRUE(ValidateVertexTarget({"example.com:my-project", "us-east5", false}).ok());
  EXPECT_FALSE(ValidateVertexTarget({"", "global", false}).ok());
  EXPECT_FALSE(ValidateVertexTarget({"a/b/../c", "global", false}).ok());
  EXPECT_FALSE(ValidateVertexTarget({"my-project", "us central", false}).ok());
  EXPECT_TRUE(ValidateVertexTarget({"", "global", true}).ok());
}

TEST(VertexTest, RegionalLocationsOfferOnlyWhatTheyServe) {
  const auto& table = BuiltInGeminiModels();
  const VertexTarget global{"my-project", "global", false};
  auto all = OfferedVertexModels(global, table, {"gemini-3.1-flash-lite-image", {}, false});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3u);  // the models not retired
  const VertexTarget region{"my-project", "us-central1", false};
  auto refused = OfferedVertexModels(region, table, {"gemini-3.1-flash-lite-image", {}, false});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("location us-central1"), std::string::npos);
  // The one model served in the regions is retired: offered with --allow-retired only.
  auto retired = OfferedVertexModels(region, table, {"gemini-2.5-flash-image", {}, false});
  ASSERT_FALSE(retired.ok());
  EXPECT_NE(retired.error().message.find("retired on 2026-10-02"), std::string::npos);
  auto regional = OfferedVertexModels(region, table, {"gemini-2.5-flash-image", {}, true});
  ASSERT_TRUE(regional.ok()) << regional.error().message;
  ASSERT_EQ(regional->size(), 1u);
  EXPECT_FALSE(
      OfferedVertexModels(
          region, table,
          {"gemini-2.5-flash-image", {"gemini-2.5-flash-image", "gemini-3-pro-image"}, true})
          .ok());
  // An id outside the table passes through, as in the global location.
  auto unlisted = OfferedVertexModels(region, table, {"gemini-9-image", {}, false});
  ASSERT_TRUE(unlisted.ok()) << unlisted.error().message;
  EXPECT_EQ(unlisted->front().id, "gemini-9-image");
}

TEST(VertexTest, ARegionalLocationsNoteNamesItAndWhereTheOtherModelsAre) {
  const auto& table = BuiltInGeminiModels();
  EXPECT_EQ(VertexModelsNote({"my-project", "global", false}, table), "");
  EXPECT_EQ(VertexModelsNote({"", "us-central1", true}, table), "");
  EXPECT_EQ(VertexModelsNote({"my-project", "europe-west4", false}, table),
            "Vertex AI location europe-west4 serves only gemini-2.5-flash-image; the other image "
            "models are served in the global location (--vertex-location global)");
}

TEST(ProxyTest, TunnelTargetsNameTheSchemesPort) {
  EXPECT_EQ(EndpointHostPort({"https://aiplatform.googleapis.com", "", true}),
            "aiplatform.googleapis.com:443");
  EXPECT_EQ(EndpointHostPort({"http://127.0.0.1:8080", "", false}), "127.0.0.1:8080");
  EXPECT_EQ(EndpointHostPort({"http://example.com", "", false}), "example.com:80");
  EXPECT_EQ(EndpointHostPort({"https://[::1]", "", true}), "[::1]:443");
  EXPECT_EQ(EndpointHostPort({"https://[::1]:9443", "", true}), "[::1]:9443");
}

TEST(ProxyTest, AProbeOfNoProxyAtAllSaysNothing) {
  // Nothing listens on port 1: no status, and no wait past the timeout.
  EXPECT_EQ(ProbeProxyStatus({"127.0.0.1", 1, "user", "secret"}, "example.com:443",
                             std::chrono::milliseconds(2000)),
            0);
}

TEST(ProxyTest, NoProxyMatchingRules) {
  EXPECT_TRUE(NoProxyMatches("*", "anything", 443));
  EXPECT_TRUE(NoProxyMatches("example.com", "api.example.com", 443));
  EXPECT_TRUE(NoProxyMatches(".example.com", "api.example.com", 443));
  EXPECT_TRUE(NoProxyMatches(" other , EXAMPLE.com ", "example.com", 443));
  EXPECT_FALSE(NoProxyMatches("example.com", "badexample.com", 443));
  EXPECT_TRUE(NoProxyMatches("example.com:8443", "example.com", 8443));
  EXPECT_FALSE(NoProxyMatches("example.com:8443", "example.com", 443));
  EXPECT_TRUE(NoProxyMatches("127.0.0.1", "127.0.0.1", 80));
  EXPECT_TRUE(NoProxyMatches("10.0.0.0/8", "10.2.3.4", 80));
  EXPECT_FALSE(NoProxyMatches("10.0.0.0/8", "11.2.3.4", 80));
  EXPECT_TRUE(NoProxyMatches("[::1]", "::1", 80));
  EXPECT_FALSE(NoProxyMatches("", "example.com", 80));
}

// NO_PROXY entries and proxy URLs read host:port as common/host_port.h does: a bracketed IPv6
// address may carry a port, and an unbracketed one is never split at its last colon.
TEST(ProxyTest, Ipv6HostsWithPorts) {
  EXPECT_TRUE(NoProxyMatches("::1", "::1", 80));
  EXPECT_TRUE(NoProxyMatches("[::1]:8080", "::1", 8080));
  EXPECT_FALSE(NoProxyMatches("[::1]:8080", "::1", 80));
  auto v6 = ParseProxyUrl("http://[fd00::5]:3128", "HTTPS_PROXY");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "fd00::5");
  EXPECT_EQ(v6->port, 3128);
  // "fd00::5:3128" would have been host "fd00::5", port 3128; "fe80::1" host "fe80:", port 1.
  EXPECT_FALSE(ParseProxyUrl("http://fd00::5:3128", "HTTPS_PROXY").ok());
  EXPECT_FALSE(ParseProxyUrl("http://fe80::1", "HTTPS_PROXY").ok());
  EXPECT_FALSE(ParseProxyUrl("http://proxy.lan:65536", "HTTPS_PROXY").ok());
  EXPECT_FALSE(ParseProxyUrl("http://proxy.lan:0", "HTTPS_PROXY").ok());
}

TEST(ProxyTest, ProxyUrlsAndTheChoicePerScheme) {
  auto p = ParseProxyUrl("http://us%40er:p%3Ass@proxy.lan:3128/", "HTTPS_PROXY");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->host, "proxy.lan");
  EXPECT_EQ(p->port, 3128);
  EXPECT_EQ(p->username, "us@er");
  EXPECT_EQ(p->password, "p:ss");
  EXPECT_EQ(ParseProxyUrl("proxy.lan", "X")->port, 80);
  auto https = ParseProxyUrl("https://user:secret@proxy.lan", "HTTPS_PROXY");
  ASSERT_FALSE(https.ok());
  EXPECT_EQ(https.error().message.find("secret"), std::string::npos);
  EXPECT_EQ(DescribeProxy(*p), "proxy.lan:3128 (with credentials)");

  ProxyEnvironment env{"http://s:1", "http://h:2", "internal.lan"};
  auto https_target = ChooseProxy(env, *ParseBaseUrl("https://aiplatform.googleapis.com"));
  ASSERT_TRUE(https_target.ok() && https_target->has_value());
  EXPECT_EQ((*https_target)->host, "s");
  auto http_target = ChooseProxy(env, *ParseBaseUrl("http://127.0.0.1:9"));
  EXPECT_EQ((*http_target)->host, "h");
  auto excepted = ChooseProxy(env, *ParseBaseUrl("https://x.internal.lan/base"));
  ASSERT_TRUE(excepted.ok());
  EXPECT_FALSE(excepted->has_value());
}

class AdcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("imgmcp-adc-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }
  std::filesystem::path dir_;
};

TEST_F(AdcTest, SearchOrderFileThenWellKnownThenMetadata) {
  AdcEnvironment env;
  env.home = dir_.string();
  env.gce_metadata_host = "169.254.169.254";
  auto metadata = FindCredentials(env);
  ASSERT_TRUE(metadata.ok());
  EXPECT_EQ(metadata->kind, CredentialKind::kMetadataServer);
  EXPECT_EQ(metadata->metadata_host, "169.254.169.254");
  EXPECT_TRUE(CredentialsConfigured(env));

  std::filesystem::create_directories(dir_ / ".config" / "gcloud");
  Write(".config/gcloud/application_default_credentials.json",
        R"({"type":"authorized_user","client_id":"a","client_secret":"b","refresh_token":"c"})");
  auto well_known = FindCredentials(env);
  ASSERT_TRUE(well_known.ok());
  EXPECT_EQ(well_known->kind, CredentialKind::kAuthorizedUser);
  EXPECT_EQ(well_known->json["token_uri"], "https://oauth2.googleapis.com/token");

  env.google_application_credentials =
      Write("sa.json", R"({"type":"service_account","client_email":"e","private_key":"k"})");
  auto named = FindCredentials(env);
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->kind, CredentialKind::kServiceAccount);
}

TEST_F(AdcTest, BadFilesNameTheFileAndWhatIsWrongNotTheContent) {
  AdcEnvironment env;
  auto message = [&](const std::string& file) {
    env.google_application_credentials = file;
    auto r = FindCredentials(env);
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.error().message;
  };
  EXPECT_NE(message((dir_ / "missing.json").string()).find("cannot be read"), std::string::npos);
  const std::string not_json = Write("a.json", "secret-content{");
  const std::string text = message(not_json);
  EXPECT_NE(text.find(not_json), std::string::npos);
  EXPECT_EQ(text.find("secret-content"), std::string::npos);
  EXPECT_NE(message(Write("b.json", R"({"client_email":"x"})")).find("no \"type\""),
            std::string::npos);
  EXPECT_NE(message(Write("c.json", R"({"type":"service_account","client_email":"x"})"))
                .find("\"private_key\""),
            std::string::npos);
  EXPECT_NE(message(Write("d.json", R"({"type":"external_account"})")).find("does not support"),
            std::string::npos);
}

std::string GenerateRsaPem(std::string* public_pem) {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  BIO* priv = BIO_new(BIO_s_mem());
  BIO* pub = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(priv, key, nullptr, nullptr, 0, nullptr, nullptr);
  PEM_write_bio_PUBKEY(pub, key);
  char* data = nullptr;
  const long private_size = BIO_get_mem_data(priv, &data);
  std::string out(data, private_size);
  const long public_size = BIO_get_mem_data(pub, &data);
  public_pem->assign(data, public_size);
  BIO_free(priv);
  BIO_free(pub);
  EVP_PKEY_free(key);
  return out;
}

Result<std::string> Base64UrlDecode(std::string s) {
  for (char& c : s) c = c == '-' ? '+' : c == '_' ? '/' : c;
  return Base64Decode(s);
}

TEST(JwtTest, ServiceAccountJwtIsSignedRs256WithTheClaimsGoogleExpects) {
  std::string public_pem;
  const std::string private_pem = GenerateRsaPem(&public_pem);
  auto jwt =
      MakeServiceAccountJwt("sa@p.iam.gserviceaccount.com", "kid1", private_pem,
                            "https://oauth2.googleapis.com/token", 1'700'000'000, &SignRs256);
  ASSERT_TRUE(jwt.ok()) << jwt.error().message;
  const size_t dot1 = jwt->find('.');
  const size_t dot2 = jwt->rfind('.');
  const Json header = Json::parse(*Base64UrlDecode(jwt->substr(0, dot1)));
  const Json claims = Json::parse(*Base64UrlDecode(jwt->substr(dot1 + 1, dot2 - dot1 - 1)));
  EXPECT_EQ(header["alg"], "RS256");
  EXPECT_EQ(header["kid"], "kid1");
  EXPECT_EQ(claims["iss"], "sa@p.iam.gserviceaccount.com");
  EXPECT_EQ(claims["aud"], "https://oauth2.googleapis.com/token");
  EXPECT_EQ(claims["scope"], kCloudPlatformScope);
  EXPECT_EQ(claims["exp"].get<int64_t>() - claims["iat"].get<int64_t>(), 3600);

  const std::string signature = *Base64UrlDecode(jwt->substr(dot2 + 1));
  const std::string input = jwt->substr(0, dot2);
  BIO* bio = BIO_new_mem_buf(public_pem.data(), static_cast<int>(public_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ASSERT_EQ(EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key), 1);
  EXPECT_EQ(EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(signature.data()),
                             signature.size(), reinterpret_cast<const unsigned char*>(input.data()),
                             input.size()),
            1);
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  BIO_free(bio);

  auto bad = SignRs256("-----BEGIN PRIVATE KEY-----\nnot a key\n", "x");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("not a PEM private key"), std::string::npos);
}

Result<AccessToken> TokenAnswer(int status, const Json& body,
                                const std::vector<std::string>& secrets = {}) {
  return ParseTokenAnswer(HttpAnswer{status, body.dump()}, "the token endpoint T", secrets);
}

// expires_in is read as a double and clamped, never converted out of range (1e300 to an integer
// is undefined: the AddressSanitizer build's float-cast-overflow check stops on it).
TEST(TokenAnswerTest, ExpiresInIsClampedToTheLifetimeBounds) {
  const auto life = [](const Json& expires_in) {
    Json body = {{"access_token", "ya29.t"}};
    if (!expires_in.is_null()) body["expires_in"] = expires_in;
    auto token = TokenAnswer(200, body);
    EXPECT_TRUE(token.ok()) << token.error().message;
    return token.ok() ? token->expires_in.count() : -1;
  };
  EXPECT_EQ(life(3599), 3599);
  EXPECT_EQ(life(3599.9), 3599);
  EXPECT_EQ(life(Json()), 3600);
  EXPECT_EQ(life("3599"), 3600);  // not a number: the default
  EXPECT_EQ(life(1e300), kMaxTokenLifetime.count());
  EXPECT_EQ(life(9.3e18), kMaxTokenLifetime.count());
  EXPECT_EQ(life(std::numeric_limits<uint64_t>::max()), kMaxTokenLifetime.count());
  EXPECT_EQ(life(-1e300), kMinTokenLifetime.count());
  EXPECT_EQ(life(-5), kMinTokenLifetime.count());
  EXPECT_EQ(life(0), kMinTokenLifetime.count());
}

TEST(TokenAnswerTest, ATokenAHeaderCannotCarryIsRefusedWithoutQuotingIt) {
  const std::string long_token = "ya29." + std::string(kMaxAccessTokenBytes, 'a');
  auto refused = TokenAnswer(200, {{"access_token", long_token}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(refused.error().message.find("the token endpoint T answered with an access_token of " +
                                         std::to_string(long_token.size()) +
                                         " bytes, over the 8 KiB imgmcp accepts"),
            std::string::npos)
      << refused.error().message;
  EXPECT_EQ(refused.error().message.find("aaaa"), std::string::npos);
  for (const char* token : {R"(ya29.a\r\nX-Injected: 1)", "ya29.a b", R"(ya29.\u00e9)"}) {
    auto bad = TokenAnswer(200, Json::parse(std::string(R"({"access_token":")") + token + R"("})"));
    ASSERT_FALSE(bad.ok()) << token;
    EXPECT_NE(bad.error().message.find("characters an HTTP header cannot carry"),
              std::string::npos);
  }
  EXPECT_TRUE(TokenAnswer(200, {{"access_token", std::string(kMaxAccessTokenBytes, 'b')}}).ok());
}

TEST(TokenAnswerTest, SecretsEchoedInARefusalAreRedactedBeforeItIsCut) {
  const std::string secret = "1//refresh-" + std::string(300, 'r');
  // The description is cut to 200 characters: the secret straddles the cut.
  auto refused = TokenAnswer(
      400, {{"error", "invalid_grant"}, {"error_description", std::string(150, '.') + secret}},
      {secret});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(refused.error().message.find("invalid_grant: ....."), std::string::npos);
  EXPECT_NE(refused.error().message.find("[redacted]"), std::string::npos);
  EXPECT_EQ(refused.error().message.find("rrrrrrrr"), std::string::npos) << refused.error().message;
}

}  // namespace
}  // namespace imgmcp::gemini
