#include "mcp/tool_registry.h"

#include <gtest/gtest.h>

#include "mcp/pagination.h"

namespace imgmcp::mcp {
namespace {

ToolDefinition PlainDef(std::string name) {
  ToolDefinition d;
  d.name = std::move(name);
  d.description = "d";
  d.input_schema = {{"type", "object"}};
  return d;
}

ToolHandler Noop() {
  return [](const Json&, ToolCallContext&) { return ToolResult::Text("ok"); };
}

TEST(ToolRegistryTest, ValidatesNamesSchemasAndDuplicates) {
  ToolRegistry r;
  EXPECT_TRUE(r.Register(MakeToolSpec(PlainDef("good_name-1.x"), Noop())).ok());
  EXPECT_FALSE(r.Register(MakeToolSpec(PlainDef("good_name-1.x"), Noop())).ok());  // duplicate
  EXPECT_FALSE(r.Register(MakeToolSpec(PlainDef(""), Noop())).ok());
  EXPECT_FALSE(r.Register(MakeToolSpec(PlainDef("has space"), Noop())).ok());
  EXPECT_FALSE(r.Register(MakeToolSpec(PlainDef(std::string(129, 'a')), Noop())).ok());
  EXPECT_FALSE(r.Register(MakeToolSpec(PlainDef("no_handler"), nullptr)).ok());
  ToolDefinition bad = PlainDef("array_schema");
  bad.input_schema = {{"type", "array"}};
  EXPECT_FALSE(r.Register(MakeToolSpec(bad, Noop())).ok());
  EXPECT_EQ(r.size(), 1u);
  EXPECT_NE(r.Find("good_name-1.x"), nullptr);
  EXPECT_EQ(r.Find("missing"), nullptr);
}

TEST(ToolRegistryTest, PaginatesInRegistrationOrder) {
  ToolRegistry r;
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(r.Register(MakeToolSpec(PlainDef("t" + std::to_string(i)), Noop())).ok());
  std::vector<std::string> names;
  std::optional<std::string> cursor;
  int pages = 0;
  do {
    auto page = r.List(cursor, 2);
    ASSERT_TRUE(page.ok());
    for (const Json& t : page->tools) names.push_back(t["name"]);
    cursor = page->next_cursor;
    ++pages;
  } while (cursor);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(names, (std::vector<std::string>{"t0", "t1", "t2", "t3", "t4"}));

  EXPECT_FALSE(r.List(std::string("garbage"), 2).ok());
  EXPECT_FALSE(r.List(EncodeOffsetCursor("prompts", 2), 2).ok());  // another list's cursor
  EXPECT_FALSE(r.List(EncodeOffsetCursor("tools", 99), 2).ok());
}

TEST(PaginationTest, PageOfCutsWindowsAndNamesTheNextOne) {
  auto first = PageOf("tools", std::nullopt, 5, 2);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->begin, 0u);
  EXPECT_EQ(first->end, 2u);
  ASSERT_TRUE(first->next_cursor);
  auto last = PageOf("tools", EncodeOffsetCursor("tools", 4), 5, 2);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->begin, 4u);
  EXPECT_EQ(last->end, 5u);
  EXPECT_FALSE(last->next_cursor);  // the list ends here: no cursor
  auto exact = PageOf("tools", std::nullopt, 4, 4);
  ASSERT_TRUE(exact.ok());
  EXPECT_FALSE(exact->next_cursor);
  auto zero = PageOf("tools", std::nullopt, 3, 0);  // a page holds at least one item
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero->end, 1u);
  auto empty = PageOf("tools", std::nullopt, 0, 10);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->end, 0u);
  EXPECT_FALSE(empty->next_cursor);
  EXPECT_FALSE(PageOf("tools", EncodeOffsetCursor("prompts", 1), 5, 2).ok());
  EXPECT_FALSE(PageOf("tools", std::string("garbage"), 5, 2).ok());
}

TEST(ToolRegistryTest, SerialisesOnlyTheFieldsThatAreSet) {
  ToolDefinition d = PlainDef("plain");
  Json plain = ToolDefinitionToJson(d);
  EXPECT_EQ(plain,
            (Json{{"name", "plain"}, {"description", "d"}, {"inputSchema", {{"type", "object"}}}}));

  d.title = "Title";
  d.output_schema = Json{{"type", "object"}};
  d.annotations.read_only = true;
  d.annotations.destructive = false;
  d.meta = Json{{"ui", {{"resourceUri", "ui://x/y.html"}}}};
  Json full = ToolDefinitionToJson(d);
  EXPECT_EQ(full["title"], "Title");
  EXPECT_EQ(full["_meta"], (Json{{"ui", {{"resourceUri", "ui://x/y.html"}}}}));
  EXPECT_EQ(full["outputSchema"], (Json{{"type", "object"}}));
  EXPECT_EQ(full["annotations"], (Json{{"readOnlyHint", true}, {"destructiveHint", false}}));
}

TEST(ToolRegistryTest, SerialisesResults) {
  ToolResult ok = ToolResult::Text("hi");
  ok.structured_content = Json{{"a", 1}};
  EXPECT_EQ(ToolResultToJson(std::move(ok)),
            (Json{{"content", {{{"type", "text"}, {"text", "hi"}}}},
                  {"structuredContent", {{"a", 1}}},
                  {"isError", false}}));
  Json err = ToolResultToJson(ToolResult::ErrorText("bad"));
  EXPECT_EQ(err["isError"], true);
  EXPECT_FALSE(err.contains("structuredContent"));
}

}  // namespace
}  // namespace imgmcp::mcp
