#include "server/http/request_checks.h"

#include <gtest/gtest.h>

namespace imgmcp::http {
namespace {

TEST(HostnameOf, StripsPortsAndLowercases) {
  EXPECT_EQ(HostnameOf("localhost"), "localhost");
  EXPECT_EQ(HostnameOf("LocalHost:8080"), "localhost");
  EXPECT_EQ(HostnameOf("127.0.0.1:1"), "127.0.0.1");
  EXPECT_EQ(HostnameOf("[::1]"), "[::1]");
  EXPECT_EQ(HostnameOf("[::1]:3000"), "[::1]");
  EXPECT_EQ(HostnameOf("[::1]x"), "");
  EXPECT_EQ(HostnameOf("host:port"), "");
  EXPECT_EQ(HostnameOf(""), "");
  EXPECT_EQ(HostnameOf("user@evil.com"), "");
}

TEST(OriginPolicy, LoopbackHostsOnAnyPort) {
  OriginPolicy policy;
  EXPECT_TRUE(policy.HostAllowed("localhost:1234"));
  EXPECT_TRUE(policy.HostAllowed("127.0.0.1"));
  EXPECT_TRUE(policy.HostAllowed("[::1]:80"));
  EXPECT_TRUE(policy.HostAllowed(""));  // no Host header at all
  EXPECT_FALSE(policy.HostAllowed("evil.example.com"));
  EXPECT_FALSE(policy.HostAllowed("evil.example.com:1234"));
  EXPECT_FALSE(policy.HostAllowed("localhost.evil.com"));
  EXPECT_FALSE(policy.HostAllowed("127.0.0.2"));
}

TEST(OriginPolicy, Origins) {
  OriginPolicy policy;
  EXPECT_TRUE(policy.OriginAllowed(""));
  EXPECT_TRUE(policy.OriginAllowed("http://localhost:5173"));
  EXPECT_TRUE(policy.OriginAllowed("https://127.0.0.1"));
  EXPECT_TRUE(policy.OriginAllowed("http://[::1]:8080"));
  EXPECT_FALSE(policy.OriginAllowed("null"));
  EXPECT_FALSE(policy.OriginAllowed("http://evil.example.com"));
  EXPECT_FALSE(policy.OriginAllowed("http://localhost.evil.example.com"));
  EXPECT_FALSE(policy.OriginAllowed("file://localhost"));
  EXPECT_FALSE(policy.OriginAllowed("http://localhost/path"));
}

TEST(OriginPolicy, ExtraHosts) {
  OriginPolicy policy({"MyBox.lan", "10.0.0.5:8080"});
  EXPECT_TRUE(policy.HostAllowed("mybox.lan:8080"));
  EXPECT_TRUE(policy.OriginAllowed("http://10.0.0.5:9999"));
  EXPECT_FALSE(policy.HostAllowed("otherbox.lan"));
}

TEST(AcceptsMediaType, ListsParametersAndWildcards) {
  const char* both = "application/json, text/event-stream";
  EXPECT_TRUE(AcceptsMediaType(both, "application/json"));
  EXPECT_TRUE(AcceptsMediaType(both, "text/event-stream"));
  EXPECT_TRUE(AcceptsMediaType("text/event-stream;q=0.9,application/json", "application/json"));
  EXPECT_TRUE(AcceptsMediaType("*/*", "text/event-stream"));
  EXPECT_TRUE(AcceptsMediaType("text/*", "text/event-stream"));
  EXPECT_FALSE(AcceptsMediaType("application/json", "text/event-stream"));
  EXPECT_FALSE(AcceptsMediaType("", "application/json"));
  EXPECT_FALSE(AcceptsMediaType("text/html", "text/event-stream"));
}

TEST(IsJsonContentType, WithAndWithoutParameters) {
  EXPECT_TRUE(IsJsonContentType("application/json"));
  EXPECT_TRUE(IsJsonContentType("Application/JSON; charset=utf-8"));
  EXPECT_FALSE(IsJsonContentType("text/plain"));
  EXPECT_FALSE(IsJsonContentType(""));
  EXPECT_FALSE(IsJsonContentType("application/jsonx"));
}

TEST(BearerToken, ExactMatchOnly) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(BearerTokenMatches("Bearer s3cret", "s3cret"));
  EXPECT_TRUE(BearerTokenMatches("bearer s3cret", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("Bearer s3cre", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("Bearer s3crett", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("Basic s3cret", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("s3cret", "s3cret"));
}

}  // namespace
}  // namespace imgmcp::http
