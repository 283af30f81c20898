#include "mcp/line_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace imgmcp::mcp {
namespace {

struct Collected {
  std::vector<std::string> lines;
  int oversize = 0;
};

LineSplitter MakeSplitter(size_t max, Collected* out) {
  return LineSplitter(
      max, [out](std::string_view line) { out->lines.emplace_back(line); },
      [out] { ++out->oversize; });
}

TEST(LineSplitterTest, SplitsMessagesAcrossAndWithinChunks) {
  Collected c;
  LineSplitter s = MakeSplitter(1024, &c);
  s.Feed("{\"a\":1}\n{\"b\"");
  s.Feed(":2}");
  s.Feed("\n{\"c\":3}\n{\"d\":4}\n");
  EXPECT_EQ(c.lines,
            (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{\"c\":3}", "{\"d\":4}"}));
  EXPECT_EQ(c.oversize, 0);
}

TEST(LineSplitterTest, OneByteAtATime) {
  Collected c;
  LineSplitter s = MakeSplitter(1024, &c);
  const std::string input = "first\r\nsecond\n";
  for (char ch : input) s.Feed(std::string_view(&ch, 1));
  EXPECT_EQ(c.lines, (std::vector<std::string>{"first", "second"}));
}

TEST(LineSplitterTest, AcceptsCrlfAndSkipsBlankLines) {
  Collected c;
  LineSplitter s = MakeSplitter(1024, &c);
  s.Feed("\n\r\n  \nx\r\n\t\r\ny\n");
  EXPECT_EQ(c.lines, (std::vector<std::string>{"x", "y"}));
}

TEST(LineSplitterTest, LineOfExactlyTheLimitIsAccepted) {
  Collected c;
  LineSplitter s = MakeSplitter(8, &c);
  s.Feed("12345678\n1234");
  s.Feed("5678\r\n");
  EXPECT_EQ(c.lines, (std::vector<std::string>{"12345678", "12345678"}));
  EXPECT_EQ(c.oversize, 0);
}

TEST(LineSplitterTest, OversizeLineIsRefusedOnceAndStreamResyncs) {
  Collected c;
  LineSplitter s = MakeSplitter(8, &c);
  s.Feed("ok\n123456");
  s.Feed("789abcdef");  // now known to be too long: refused here, without waiting for '\n'
  EXPECT_EQ(c.oversize, 1);
  s.Feed(std::string(1000, 'z'));  // still the same line: skipped, not buffered, not re-reported
  s.Feed("zz\nafter\n");
  EXPECT_EQ(c.oversize, 1);
  EXPECT_EQ(c.lines, (std::vector<std::string>{"ok", "after"}));
}

TEST(LineSplitterTest, OversizeLineInsideOneChunk) {
  Collected c;
  LineSplitter s = MakeSplitter(4, &c);
  s.Feed("abcdefgh\nabc\n123456789\nxy\n");
  EXPECT_EQ(c.oversize, 2);
  EXPECT_EQ(c.lines, (std::vector<std::string>{"abc", "xy"}));
}

TEST(LineSplitterTest, FinishDeliversAnUnterminatedLastLine) {
  Collected c;
  LineSplitter s = MakeSplitter(64, &c);
  s.Feed("a\nlast");
  EXPECT_EQ(c.lines.size(), 1u);
  s.Finish();
  EXPECT_EQ(c.lines, (std::vector<std::string>{"a", "last"}));
}

}  // namespace
}  // namespace imgmcp::mcp
