// IssuerKeys against a fake authorization server and a fake clock: discovery through either
// metadata document, the issuer check, fetching again for an unknown key id (at most once per
// interval), and many threads asking for a new key at once causing one fetch. Labelled
// "concurrency": it runs under ThreadSanitizer too.
#include "server/oauth/issuer_keys.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tests/unit/oauth/fake_clock.h"
#include "tests/unit/oauth/fake_issuer.h"
#include "tests/unit/oauth/test_keys.h"

namespace imgmcp::oauth {
namespace {

using testing::Ed25519TestKey;
using testing::FakeClock;
using testing::FakeIssuer;
using testing::kIssuer;
using testing::kJwksUri;

constexpr std::chrono::milliseconds kInterval{2000};

class IssuerKeysTest : public ::testing::Test {
 protected:
  IssuerKeysTest() : fetch_(issuer_.Function()) {}

  std::unique_ptr<IssuerKeys> Make() {
    return std::make_unique<IssuerKeys>(kIssuer, *ParseOAuthUrl(kIssuer, "issuer"), fetch_, clock_,
                                        kInterval);
  }

  FakeIssuer issuer_;
  FetchFunction fetch_;
  FakeClock clock_;
  Ed25519TestKey first_{"first"};
  Ed25519TestKey second_{"second"};
};

TEST_F(IssuerKeysTest, FindsAKeyThroughTheAuthorizationServerMetadata) {
  issuer_.SetKeys(Json::array({first_.PublicJwk()}));
  auto keys = Make();
  auto key = keys->Find("first", "EdDSA");
  ASSERT_TRUE(key.ok()) << key.error().message;
  EXPECT_EQ(key->kid, "first");
  EXPECT_EQ(key->kty, "OKP");
  EXPECT_TRUE(keys->Find("first", "EdDSA").ok());
  EXPECT_EQ(issuer_.fetches(kJwksUri), 1);  // cached
}

TEST_F(IssuerKeysTest, FallsBackToOpenIdConfiguration) {
  issuer_.Remove("https://issuer.test/.well-known/oauth-authorization-server");
  issuer_.Serve("https://issuer.test/.well-known/openid-configuration",
                Json{{"issuer", kIssuer}, {"jwks_uri", kJwksUri}}.dump());
  issuer_.SetKeys(Json::array({first_.PublicJwk()}));
  EXPECT_TRUE(Make()->Find("first", "EdDSA").ok());
}

TEST_F(IssuerKeysTest, RefusesMetadataNamingAnotherIssuer) {
  issuer_.Serve("https://issuer.test/.well-known/oauth-authorization-server",
                Json{{"issuer", "https://evil.test"}, {"jwks_uri", kJwksUri}}.dump());
  issuer_.SetKeys(Json::array({first_.PublicJwk()}));
  auto key = Make()->Find("first", "EdDSA");
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(key.error().message.find("does not name the issuer"), std::string::npos);
}

TEST_F(IssuerKeysTest, RefusesAPlainHttpJwksUriOffLoopback) {
  issuer_.Serve("https://issuer.test/.well-known/oauth-authorization-server",
                Json{{"issuer", kIssuer}, {"jwks_uri", "http://issuer.test/jwks"}}.dump());
  auto key = Make()->Find("first", "EdDSA");
  ASSERT_FALSE(key.ok());
  EXPECT_NE(key.error().message.find("https://"), std::string::npos);
}

TEST_F(IssuerKeysTest, WithoutAKeyIdTheOnlyKeyOfTheTypeIsUsed) {
  issuer_.SetKeys(Json::array({first_.PublicJwk()}));
  auto keys = Make();
  EXPECT_TRUE(keys->Find("", "EdDSA").ok());
  EXPECT_FALSE(keys->Find("", "RS256").ok());
  issuer_.SetKeys(Json::array({first_.PublicJwk(), second_.PublicJwk()}));
  clock_.Advance(kInterval);
  auto ambiguous = Make()->Find("", "EdDSA");
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_EQ(ambiguous.error().code, ErrorCode::kPermissionDenied);
}

TEST_F(IssuerKeysTest, AnUnknownKeyIdFetchesTheKeysAgainAtMostOncePerInterval) {
  issuer_.SetKeys(Json::array({first_.PublicJwk()}));
  auto keys = Make();
  ASSERT_TRUE(keys->Find("first", "EdDSA").ok());
  // A rotation right after the first fetch: that fetch does not count, so it is fetched at once.
  issuer_.SetKeys(Json::array({first_.PublicJwk(), second_.PublicJwk()}));
  EXPECT_TRUE(keys->Find("second", "EdDSA").ok());
  EXPECT_EQ(issuer_.fetches(kJwksUri), 2);
  // Within the interval of that fetch: another rotation is not fetched, nor are random key ids.
  Ed25519TestKey third("third");
  issuer_.SetKeys(Json::array({second_.PublicJwk(), third.PublicJwk()}));
  auto early = keys->Find("third", "EdDSA");
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error().code, ErrorCode::kPermissionDenied);
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(keys->Find("random" + std::to_string(i), "EdDSA").ok());
  EXPECT_EQ(issuer_.fetches(kJwksUri), 2);
  clock_.Advance(kInterval);
  EXPECT_TRUE(keys->Find("third", "EdDSA").ok());
  EXPECT_EQ(issuer_.fetches(kJwksUri), 3);
  // The metadata was read once: its jwks_uri is remembered.
  EXPECT_EQ(issuer_.fetches("https://issuer.test/.well-known/oauth-authorization-server"), 1);
}

TEST_F(IssuerKeysTest, AnIssuerThatCannotBeReachedIsUnavailableAndTriedAgainLater) {
  issuer_.Serve(kJwksUri, "oops", 500);
  auto keys = Make();
  auto key = keys->Find("first", "EdDSA");
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(key.error().message.find("HTTP 500"), std::string::npos);
  issuer_.SetKeys(Json::array({first_.PublicJwk()}));
  clock_.Advance(kInterval);
  EXPECT_TRUE(keys->Find("first", "EdDSA").ok());
}

TEST_F(IssuerKeysTest, ManyThreadsAskingForANewKeyAtOnceCauseOneFetch) {
  issuer_.SetKeys(Json::array({first_.PublicJwk()}));
  auto keys = Make();
  ASSERT_TRUE(keys->Find("first", "EdDSA").ok());
  issuer_.SetKeys(Json::array({first_.PublicJwk(), second_.PublicJwk()}));
  clock_.Advance(kInterval);
  constexpr int kThreads = 16;
  std::atomic<int> found{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      for (int round = 0; round < 20; ++round) {
        if (keys->Find(round % 2 == 0 ? "second" : "first", "EdDSA").ok()) found.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(found.load(), kThreads * 20);
  EXPECT_EQ(issuer_.fetches(kJwksUri), 2);  // the first fetch and one for "second"
}

}  // namespace
}  // namespace imgmcp::oauth
