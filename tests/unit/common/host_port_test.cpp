#include "common/host_port.h"

#include <gtest/gtest.h>

namespace imgmcp {
namespace {

TEST(SplitHostPortTest, NamesAndPorts) {
  auto a = SplitHostPort("example.com:8080");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "example.com");
  EXPECT_EQ(a->port, 8080);
  EXPECT_FALSE(a->bracketed);
  a = SplitHostPort("127.0.0.1:0");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 0);
  a = SplitHostPort("localhost:65535");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->port, 65535);
}

TEST(SplitHostPortTest, AMissingPortIsNoPort) {
  for (const char* text : {"example.com", "example.com:", "[::1]", "[::1]:"}) {
    auto a = SplitHostPort(text);
    ASSERT_TRUE(a.ok()) << text;
    EXPECT_FALSE(a->port.has_value()) << text;
  }
  EXPECT_EQ(SplitHostPort("example.com:")->host, "example.com");
  auto empty = SplitHostPort("");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->host, "");
  EXPECT_FALSE(empty->port.has_value());
}

TEST(SplitHostPortTest, Ipv6InBrackets) {
  auto a = SplitHostPort("[::1]:9000");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 9000);
  EXPECT_TRUE(a->bracketed);
  a = SplitHostPort("[fe80::1%25eth0]");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "fe80::1%25eth0");
  a = SplitHostPort("[]:80");  // the caller decides about an empty host
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "");
  EXPECT_EQ(a->port, 80);
}

TEST(SplitHostPortTest, RefusesWhatItWouldHaveToGuess) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c :
       {Case{"::1", "put IPv6 hosts in brackets"},
        Case{"fe80::1:8080", "put IPv6 hosts in brackets"},
        Case{"a:b:80", "put IPv6 hosts in brackets"},
        Case{"[::1", "an IPv6 host needs the form [ADDR]:PORT"},
        Case{"[::1]80", "an IPv6 host needs the form [ADDR]:PORT"},
        Case{"[::1]x:80", "an IPv6 host needs the form [ADDR]:PORT"},
        Case{"host:65536", "the port must be a number from 0 to 65535"},
        Case{"host:99999999999999999999", "the port must be a number from 0 to 65535"},
        Case{"host:-1", "the port must be a number from 0 to 65535"},
        Case{"host:-0", "the port must be a number from 0 to 65535"},
        Case{"host:+80", "the port must be a number from 0 to 65535"},
        Case{"host: 80", "the port must be a number from 0 to 65535"},
        Case{"host:80 ", "the port must be a number from 0 to 65535"},
        Case{"host:http", "the port must be a number from 0 to 65535"},
        Case{"[::1]:0x50", "the port must be a number from 0 to 65535"}}) {
    auto a = SplitHostPort(c.text);
    ASSERT_FALSE(a.ok()) << c.text;
    EXPECT_EQ(a.error().code, ErrorCode::kInvalidArgument) << c.text;
    EXPECT_EQ(a.error().message, c.says) << c.text;
  }
}

}  // namespace
}  // namespace imgmcp
