// ResourceServer end to end against a fake authorization server: a signed token becomes a
// principal, every claim rule refuses what it should, and the metadata and challenges read as
// RFC 9728 and RFC 6750 write them.
#include "server/oauth/resource_server.h"

#include <gtest/gtest.h>

#include <chrono>

#include "tests/unit/oauth/fake_clock.h"
#include "tests/unit/oauth/fake_issuer.h"
#include "tests/unit/oauth/test_keys.h"

namespace imgmcp::oauth {
namespace {

using testing::Ed25519TestKey;
using testing::FakeIssuer;

constexpr char kProtectedResource[] = "https://images.test/mcp";

int64_t WallSecondsFromNow(int seconds) {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
             .count() +
         seconds;
}

class ResourceServerTest : public ::testing::Test {
 protected:
  ResourceServerTest() {
    issuer_.SetKeys(Json::array({key_.PublicJwk()}));
    OAuthOptions options;
    options.issuers = {testing::kIssuer};
    options.resource = kProtectedResource;
    options.fetch = issuer_.Function();
    server_ = std::move(ResourceServer::Create(std::move(options), "unused")).value();
  }

  Json Claims() const {
    return Json{{"iss", testing::kIssuer},
                {"sub", "alice"},
                {"aud", kProtectedResource},
                {"exp", WallSecondsFromNow(300)},
                {"scope", "imgmcp:read imgmcp:write"},
                {"client_id", "cli"}};
  }
  Result<Principal> Check(const Json& claims, Json header = Json::object()) {
    return server_->Authenticate("Bearer " + key_.Sign(claims, std::move(header)));
  }
  void ExpectRefused(const Json& claims, const std::string& because, Json header = Json::object()) {
    const std::string token = key_.Sign(claims, std::move(header));
    auto principal = server_->Authenticate("Bearer " + token);
    ASSERT_FALSE(principal.ok()) << because;
    EXPECT_EQ(principal.error().code, ErrorCode::kPermissionDenied) << because;
    EXPECT_NE(principal.error().message.find(because), std::string::npos)
        << principal.error().message;
    EXPECT_EQ(principal.error().message.find(token.substr(token.rfind('.') + 1)),
              std::string::npos);
  }

  FakeIssuer issuer_;
  Ed25519TestKey key_{"k1"};
  std::unique_ptr<ResourceServer> server_;
};

TEST_F(ResourceServerTest, AValidTokenNamesItsPrincipal) {
  auto principal = Check(Claims());
  ASSERT_TRUE(principal.ok()) << principal.error().message;
  EXPECT_EQ(principal->issuer, testing::kIssuer);
  EXPECT_EQ(principal->subject, "alice");
  EXPECT_EQ(principal->client_id, "cli");
  EXPECT_TRUE(server_->Allows(*principal, Access::kWrite));
  EXPECT_TRUE(server_->Allows(*principal, Access::kRead));
}

TEST_F(ResourceServerTest, ScopesComeFromScopeOrScpAndDecideAccess) {
  Json claims = Claims();
  claims.erase("scope");
  claims["scp"] = {"imgmcp:read"};
  claims.erase("client_id");
  claims["azp"] = "web";
  auto principal = Check(claims);
  ASSERT_TRUE(principal.ok()) << principal.error().message;
  EXPECT_EQ(principal->client_id, "web");
  EXPECT_TRUE(server_->Allows(*principal, Access::kRead));
  EXPECT_FALSE(server_->Allows(*principal, Access::kWrite));
  EXPECT_TRUE(server_->Allows(*principal, Access::kAny));
}

TEST_F(ResourceServerTest, AnAudienceListHoldingTheResourceIsAccepted) {
  Json claims = Claims();
  claims["aud"] = {"https://other.test", kProtectedResource};
  EXPECT_TRUE(Check(claims).ok());
}

TEST_F(ResourceServerTest, ExpiryAndNotBeforeHaveAMinuteOfLeeway) {
  Json claims = Claims();
  claims["exp"] = WallSecondsFromNow(-30);
  EXPECT_TRUE(Check(claims).ok());
  claims["exp"] = WallSecondsFromNow(-90);
  ExpectRefused(claims, "expired");
  claims = Claims();
  claims["nbf"] = WallSecondsFromNow(30);
  EXPECT_TRUE(Check(claims).ok());
  claims["nbf"] = WallSecondsFromNow(90);
  ExpectRefused(claims, "not valid yet");
}

TEST_F(ResourceServerTest, EachClaimRuleRefusesTheToken) {
  Json claims = Claims();
  claims["aud"] = std::string(kProtectedResource) + "/";
  ExpectRefused(claims, "aud");
  claims = Claims();
  claims.erase("exp");
  ExpectRefused(claims, "exp");
  claims = Claims();
  claims.erase("sub");
  ExpectRefused(claims, "sub");
  claims = Claims();
  claims["iss"] = "https://other.test";
  ExpectRefused(claims, "trusted issuer");
  ExpectRefused(Claims(), "typ", Json{{"typ", "id+jwt"}});
  ExpectRefused(Claims(), "alg", Json{{"alg", "HS256"}});
  ExpectRefused(Claims(), "key id", Json{{"kid", "unknown"}});
}

TEST_F(ResourceServerTest, AMissingOrNonBearerHeaderIsNotAnInvalidToken) {
  for (const char* header : {"", "   ", "Basic YWxpY2U6cHc=", "Bearer"}) {
    auto principal = server_->Authenticate(header);
    ASSERT_FALSE(principal.ok()) << header;
    EXPECT_EQ(principal.error().code, ErrorCode::kInvalidArgument) << header;
  }
  auto garbage = server_->Authenticate("Bearer not.a.jwt");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.error().code, ErrorCode::kPermissionDenied);
}

TEST_F(ResourceServerTest, MetadataAndChallengesNameTheResource) {
  EXPECT_EQ(server_->metadata_url(),
            "https://images.test/.well-known/oauth-protected-resource/mcp");
  const Json metadata = Json::parse(server_->MetadataJson());
  EXPECT_EQ(metadata["resource"], kProtectedResource);
  EXPECT_EQ(metadata["authorization_servers"], Json::array({testing::kIssuer}));
  EXPECT_EQ(metadata["scopes_supported"], Json::array({"imgmcp:read", "imgmcp:write"}));
  EXPECT_EQ(metadata["bearer_methods_supported"], Json::array({"header"}));
  EXPECT_EQ(server_->Challenge(),
            "Bearer resource_metadata=\"https://images.test/.well-known/oauth-protected-resource/"
            "mcp\", scope=\"imgmcp:read imgmcp:write\"");
  EXPECT_NE(server_->Challenge("the \"token\" has expired")
                .find("error=\"invalid_token\", error_description=\"the token has expired\""),
            std::string::npos);
  EXPECT_EQ(server_->InsufficientScope(Access::kWrite)
                .rfind("Bearer error=\"insufficient_scope\", scope=\"imgmcp:write\"", 0),
            0u);
}

// A token verified once is remembered: it is still accepted after the issuer dropped its key,
// which a second signature check would not find — until the token expires.
TEST(ResourceServerMemory, AnAcceptedTokenIsRememberedUntilItExpires) {
  testing::FakeClock clock;
  FakeIssuer issuer;
  Ed25519TestKey old_key("old");
  Ed25519TestKey new_key("new");
  issuer.SetKeys(Json::array({old_key.PublicJwk()}));
  OAuthOptions options;
  options.issuers = {testing::kIssuer};
  options.resource = kProtectedResource;
  options.fetch = issuer.Function();
  options.clock = &clock;
  auto server = std::move(ResourceServer::Create(std::move(options), "unused")).value();
  const Json claims = {{"iss", testing::kIssuer},
                       {"sub", "alice"},
                       {"aud", kProtectedResource},
                       {"exp", clock.WallSeconds() + 120}};
  const std::string old_token = "Bearer " + old_key.Sign(claims);
  ASSERT_TRUE(server->Authenticate(old_token).ok());
  // The issuer rotates to a new key only; a token of the new key makes imgmcp fetch the set.
  issuer.SetKeys(Json::array({new_key.PublicJwk()}));
  clock.Advance(std::chrono::seconds(3));
  ASSERT_TRUE(server->Authenticate("Bearer " + new_key.Sign(claims)).ok());
  EXPECT_EQ(issuer.fetches(testing::kJwksUri), 2);
  EXPECT_TRUE(server->Authenticate(old_token).ok());  // remembered
  Json other_claims = claims;
  other_claims["jti"] = "2";
  const std::string unseen = "Bearer " + old_key.Sign(other_claims);
  EXPECT_FALSE(server->Authenticate(unseen).ok());  // the same key, not remembered: refused
  clock.Advance(std::chrono::seconds(180));         // past exp and the leeway
  EXPECT_FALSE(server->Authenticate(old_token).ok());
}

TEST(ResourceServerCreate, RefusesUrlsItCannotTrust) {
  OAuthOptions options;
  options.issuers = {"http://issuer.example"};
  EXPECT_FALSE(ResourceServer::Create(options, "http://127.0.0.1:1/mcp").ok());
  options.issuers = {"http://127.0.0.1:9"};
  EXPECT_TRUE(ResourceServer::Create(options, "http://127.0.0.1:1/mcp").ok());
  EXPECT_FALSE(ResourceServer::Create(options, "http://0.0.0.0:1/mcp").ok());
  options.issuers.clear();
  EXPECT_FALSE(ResourceServer::Create(options, "http://127.0.0.1:1/mcp").ok());
}

}  // namespace
}  // namespace imgmcp::oauth
