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
                          "[::1]80", "host:80x", "host:-0", "-0", "+80", " 80", "[::1]:-0"}) {
    auto a = ParseListenAddress(bad);
    EXPECT_FALSE(a.ok()) << bad;
    if (!a.ok()) {
      EXPECT_EQ(a.error().code, ErrorCode::kInvalidArgument);
    }
  }
}

TEST(ParseListenAddressTest, SaysWhatIsWrong) {
  auto message = [](const char* text) { return ParseListenAddress(text).error().message; };
  EXPECT_NE(message(":80").find("empty host"), std::string::npos);
  EXPECT_NE(message("[::1]").find("an IPv6 host needs the form [ADDR]:PORT"), std::string::npos);
  EXPECT_NE(message("::1:80").find("put IPv6 hosts in brackets"), std::string::npos);
  EXPECT_NE(message("host:").find("the port must be a number from 0 to 65535"), std::string::npos);
  EXPECT_NE(message("[::1]:").find("the port must be a number from 0 to 65535"), std::string::npos);
  EXPECT_EQ(message("host:70000"),
            "invalid address 'host:70000': the port must be a number from 0 to 65535 (expected "
            "[HOST:]PORT, e.g. 8080 or 127.0.0.1:8080)");
}

TEST(EndpointUrlTest, BracketsIpv6) {
  EXPECT_EQ(EndpointUrl("127.0.0.1", 8080), "http://127.0.0.1:8080/mcp");
  EXPECT_EQ(EndpointUrl("::1", 1), "http://[::1]:1/mcp");
}

}  // namespace
}  // namespace imgmcp::http
