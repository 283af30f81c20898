// Which URLs OAuth accepts, and the discovery addresses derived from them (oauth_urls.h).
#include "server/oauth/oauth_urls.h"

#include <gtest/gtest.h>

namespace imgmcp::oauth {
namespace {

TEST(OAuthUrls, HttpsAnywhereAndPlainHttpOnlyOnLoopback) {
  EXPECT_TRUE(ParseOAuthUrl("https://login.example.com/tenant/v2.0", "x").ok());
  for (const char* url : {"http://127.0.0.1:8080", "http://localhost/x", "http://[::1]:9/"}) {
    EXPECT_TRUE(ParseOAuthUrl(url, "x").ok()) << url;
  }
  for (const char* url : {"http://login.example.com", "ftp://x", "https://", "https://a?b=1",
                          "https://a#f", "https://user@a", "login.example.com"}) {
    auto parsed = ParseOAuthUrl(url, "--oauth-issuer");
    ASSERT_FALSE(parsed.ok()) << url;
    EXPECT_NE(parsed.error().message.find("--oauth-issuer"), std::string::npos);
  }
}

TEST(OAuthUrls, MetadataAddressesFollowRfc8414AndOpenIdDiscovery) {
  auto issuer = ParseOAuthUrl("https://login.example.com/tenant/v2.0", "x");
  ASSERT_TRUE(issuer.ok());
  EXPECT_EQ(IssuerMetadataUrls(*issuer),
            (std::vector<std::string>{
                "https://login.example.com/.well-known/oauth-authorization-server/tenant/v2.0",
                "https://login.example.com/tenant/v2.0/.well-known/openid-configuration"}));
  auto root = ParseOAuthUrl("https://accounts.google.com", "x");
  EXPECT_EQ(IssuerMetadataUrls(*root),
            (std::vector<std::string>{
                "https://accounts.google.com/.well-known/oauth-authorization-server",
                "https://accounts.google.com/.well-known/openid-configuration"}));
}

TEST(OAuthUrls, ProtectedResourceMetadataInsertsTheWellKnownPath) {
  EXPECT_EQ(ProtectedResourceMetadataUrl(*ParseOAuthUrl("https://images.test/mcp", "x")),
            "https://images.test/.well-known/oauth-protected-resource/mcp");
  EXPECT_EQ(ProtectedResourceMetadataUrl(*ParseOAuthUrl("http://127.0.0.1:5/", "x")),
            "http://127.0.0.1:5/.well-known/oauth-protected-resource");
}

}  // namespace
}  // namespace imgmcp::oauth
