#include "server/http/request_head.h"

#include <gtest/gtest.h>

#include <string>

namespace imgmcp::http {
namespace {

TEST(RequestHeadersTest, ValuesAreTheBytesAsSentNeverPercentDecoded) {
  const std::string head =
      "POST /mcp HTTP/1.1\r\n"
      "host: 127.0.0.1:8080\r\n"
      "Mcp-Name:   reset%5Fsession \r\n"
      "MCP-PROTOCOL-VERSION: 2026%2D07-28\r\n"
      "Authorization: Bearer a%41b\r\n"
      "X-Other: skipped\r\n"
      "\r\n";
  const RequestHeaders headers = RequestHeaders::Parse(head);
  ASSERT_EQ(headers.problem(), nullptr);
  EXPECT_EQ(headers.Get(Header::kHost), "127.0.0.1:8080");
  EXPECT_EQ(headers.Get(Header::kMcpName), "reset%5Fsession");
  EXPECT_EQ(headers.Get(Header::kMcpProtocolVersion), "2026%2D07-28");
  EXPECT_EQ(headers.Get(Header::kAuthorization), "Bearer a%41b");
  EXPECT_EQ(headers.Get(Header::kOrigin), std::nullopt);
  EXPECT_EQ(headers.Count(Header::kMcpName), 1u);
}

TEST(RequestHeadersTest, EveryLineOfARepeatedHeaderIsKept) {
  const std::string head =
      "POST /mcp HTTP/1.1\r\nMcp-Name: reset_session\r\nAccept: application/json\r\n"
      "mcp-name: get_image\r\nAccept: text/event-stream\r\n\r\n";
  const RequestHeaders headers = RequestHeaders::Parse(head);
  EXPECT_EQ(headers.Count(Header::kMcpName), 2u);
  EXPECT_EQ(headers.Get(Header::kMcpName), "reset_session");
  EXPECT_EQ(headers.Get(Header::kMcpName, 1), "get_image");
  EXPECT_EQ(headers.Get(Header::kAccept, 1), "text/event-stream");
  EXPECT_EQ(headers.Repeated(std::array{Header::kHost, Header::kMcpName}), Header::kMcpName);
  EXPECT_EQ(headers.Repeated(std::array{Header::kHost}), std::nullopt);
}

TEST(RequestHeadersTest, McpParamHeadersAreFoundByTheirNameInAnyCase) {
  const RequestHeaders headers = RequestHeaders::Parse(
      "POST /mcp HTTP/1.1\r\nMcp-Param-Session-Id:  s1 \r\nMCP-PARAM-REGION: us\r\n"
      "mcp-param-session-id: s2\r\nMcp-Param-: empty name\r\n\r\n");
  ASSERT_EQ(headers.problem(), nullptr);
  EXPECT_EQ(headers.GetParam("session-id"), "s1");
  EXPECT_EQ(headers.CountParam("Session-Id"), 2u);
  EXPECT_EQ(headers.GetParam("Region"), "us");
  EXPECT_EQ(headers.CountParam("Region"), 1u);
  EXPECT_EQ(headers.GetParam("Session"), std::nullopt);
  EXPECT_EQ(headers.GetParam(""), std::nullopt);  // "Mcp-Param-" alone is no param header
  EXPECT_EQ(headers.Count(Header::kMcpParam), 3u);
}

TEST(RequestHeadersTest, LinesEndAtLfAsHttplibReadsThem) {
  // A bare LF inside a line starts another line for httplib: so it does here.
  const RequestHeaders headers =
      RequestHeaders::Parse("POST /mcp HTTP/1.1\r\nMcp-Name: a\nMcp-Name: b\r\n\r\n");
  EXPECT_EQ(headers.Count(Header::kMcpName), 2u);
}

TEST(RequestHeadersTest, MalformedLinesAreAProblem) {
  for (const char* head :
       {"POST / HTTP/1.1\r\nMcp-Name : x\r\n\r\n", "POST / HTTP/1.1\r\n Mcp-Name: x\r\n\r\n",
        "POST / HTTP/1.1\r\nno colon here\r\n\r\n", "POST / HTTP/1.1\r\n: x\r\n\r\n",
        "POST / HTTP/1.1\r\nMcp-Name: a\rb\r\n\r\n"}) {
    EXPECT_NE(RequestHeaders::Parse(head).problem(), nullptr) << head;
  }
  std::string many = "POST / HTTP/1.1\r\n";
  for (size_t i = 0; i <= RequestHeaders::kMaxLines; ++i) many += "Accept: */*\r\n";
  EXPECT_NE(RequestHeaders::Parse(many + "\r\n").problem(), nullptr);
  // Tabs and bytes above ASCII are allowed in values.
  EXPECT_EQ(RequestHeaders::Parse("POST / HTTP/1.1\r\nX-A: \tcaf\xc3\xa9\r\n\r\n").problem(),
            nullptr);
}

TEST(RequestHeadersTest, NamesAsTheSpecificationsSpellThem) {
  EXPECT_EQ(HeaderName(Header::kMcpProtocolVersion), "MCP-Protocol-Version");
  EXPECT_EQ(HeaderName(Header::kLastEventId), "Last-Event-ID");
}

}  // namespace
}  // namespace imgmcp::http
