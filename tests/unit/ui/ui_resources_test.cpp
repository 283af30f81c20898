#include "server/ui/ui_resources.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

namespace imgmcp::ui {
namespace {

std::string ReadSource() {
  std::ifstream in(IMGMCP_VIEWER_SOURCE, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(SessionViewerHtmlTest, IsTheSourceFileByteForByte) {
  const std::string source = ReadSource();
  ASSERT_GT(source.size(), 1000u);
  EXPECT_EQ(std::string(SessionViewerHtml()), source);
}

TEST(SessionViewerHtmlTest, IsSelfContained) {
  const std::string html(SessionViewerHtml());
  EXPECT_EQ(html.rfind("<!doctype html>", 0), 0u);
  // No scripts, styles, fonts or images from anywhere: the MCP Apps default CSP allows none.
  for (const char* needle :
       {"src=\"http", "src=\"//", "href=\"http", "href=\"//", "@import", "url(http", "url(//"}) {
    EXPECT_EQ(html.find(needle), std::string::npos) << needle;
  }
}

TEST(UiResourcesTest, ListsTheViewerAsAnMcpApp) {
  UiResources resources;
  auto page = resources.List(mcp::Caller{}, std::nullopt);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->resources.size(), 1u);
  const Json& r = page->resources[0];
  EXPECT_EQ(r.at("uri"), "ui://imgmcp/session-viewer.html");
  EXPECT_EQ(r.at("mimeType"), "text/html;profile=mcp-app");
  EXPECT_EQ(r.at("size"), SessionViewerHtml().size());
  EXPECT_FALSE(page->next_cursor.has_value());
  EXPECT_TRUE(resources.Templates().empty());
  // A cursor is never one of ours.
  EXPECT_EQ(resources.List(mcp::Caller{}, "abc").error().code, ErrorCode::kInvalidArgument);
}

TEST(UiResourcesTest, ReadsTheHtmlAsText) {
  UiResources resources;
  EXPECT_TRUE(resources.Handles(kSessionViewerUri));
  EXPECT_FALSE(resources.Handles("ui://imgmcp/other.html"));
  EXPECT_FALSE(resources.Handles("imgmcp://sessions/a"));
  auto read = resources.Read(mcp::Caller{}, kSessionViewerUri);
  ASSERT_TRUE(read.ok());
  const Json& content = read->at("contents").at(0);
  EXPECT_EQ(content.at("uri"), kSessionViewerUri);
  EXPECT_EQ(content.at("mimeType"), kMcpAppMimeType);
  EXPECT_EQ(content.at("text").get<std::string>(), std::string(SessionViewerHtml()));
  EXPECT_FALSE(content.contains("blob"));
  EXPECT_EQ(resources.Read(mcp::Caller{}, "ui://imgmcp/other.html").error().code,
            ErrorCode::kNotFound);
}

TEST(UiResourcesTest, ToolMetaNamesTheViewer) {
  EXPECT_EQ(ToolUiMeta(),
            Json::parse(R"({"ui":{"resourceUri":"ui://imgmcp/session-viewer.html"}})"));
}

}  // namespace
}  // namespace imgmcp::ui
