#include "server/http/listen_address.h"

#include <gtest/gtest.h>

namespace imgmcp::http {
namespace {

TEST(ParseListenAddressTest, Forms) {
  auto a = ParseListenAddress("8080");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 8080);
  a = ParseListenAddress("localhost:0");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "localhost");
  EXPECT_EQ(a->port, 0);
  a = ParseListenAddress("[::1]:9000");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 9000);
  a = ParseListenAddress("0.0.0.0:80");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "0.0.0.0");
}

TEST(ParseListenAddressTest, Errors) {
  for (const char* bad : {"", ":80", "host:", "host:http", "host:70000", "-1", "::1:80", "[::1]",
                          "[::1]80", "host:80x"}) {
    auto a = ParseListenAddress(bad);
    EXPECT_FALSE(a.ok()) << bad;
    if (!a.ok()) {
      EXPECT_EQ(a.error().code, ErrorCode::kInvalidArgument);
    }
  }
}

TEST(EndpointUrlTest, BracketsIpv6) {
  EXPECT_EQ(EndpointUrl("127.0.0.1", 8080), "http://127.0.0.1:8080/mcp");
  EXPECT_EQ(EndpointUrl("::1", 1), "http://[::1]:1/mcp");
}

}  // namespace
}  // namespace imgmcp::http
