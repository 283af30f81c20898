#include "common/log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace imgmcp::log {
namespace {

// Captures what the log writes to stderr (fd 2) while it lives.
class StderrCapture {
 public:
  StderrCapture() : file_(std::tmpfile()), saved_(::dup(2)) { ::dup2(::fileno(file_), 2); }
  ~StderrCapture() {
    Restore();
    std::fclose(file_);
  }
  std::string Text() {
    Restore();
    std::string text;
    std::rewind(file_);
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, file_)) > 0) text.append(buffer, n);
    return text;
  }

 private:
  void Restore() {
    if (saved_ < 0) return;
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }
  std::FILE* file_;
  int saved_;
};

std::string Logged(std::string_view message) {
  StderrCapture capture;
  Warn("test", message);
  return capture.Text();
}

TEST(LogTest, ControlCharactersAreEscapedSoTheyCannotReachTheTerminal) {
  EXPECT_EQ(Logged("Host '\x1b]0;pwned\x07'"), "imgmcp warning [test] Host '\\x1b]0;pwned\\x07'\n");
  EXPECT_EQ(Logged("a\nimgmcp error [http] forged\r\tb\x7f"),
            "imgmcp warning [test] a\\nimgmcp error [http] forged\\r\\tb\\x7f\n");
  // A C1 control (here CSI, U+009B) is escaped; other UTF-8 is kept; a byte that is not UTF-8 is
  // escaped.
  EXPECT_EQ(Logged("x\xc2\x9b"
                   "31my"),
            "imgmcp warning [test] x\\u009b31my\n");
  EXPECT_EQ(Logged("caf\xc3\xa9 \xe2\x9c\x93"), "imgmcp warning [test] caf\xc3\xa9 \xe2\x9c\x93\n");
  EXPECT_EQ(Logged("bad \xff\xc3"), "imgmcp warning [test] bad \\xff\\xc3\n");
}

// The UTF-8 encoding of code point `c`.
std::string Utf8(char32_t c) {
  std::string out;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
  return out;
}

// Format characters (Unicode category Cf: the bidi controls, zero-width characters, tags) and the
// line and paragraph separators (Zl, Zp) change how a line reads without being seen: U+202E shows
// "exe.png" as "gnp.exe", U+2028 breaks a line in viewers that honour it. They are escaped.
TEST(LogTest, FormatAndSeparatorCharactersAreEscapedSoTheyCannotSpoofALine) {
  EXPECT_EQ(Logged("prompt " + Utf8(0x202E) + "gnp.exe"),
            "imgmcp warning [test] prompt \\u202egnp.exe\n");
  EXPECT_EQ(Logged("a" + Utf8(0x2028) + "imgmcp error [http] forged" + Utf8(0x2029) + "b"),
            "imgmcp warning [test] a\\u2028imgmcp error [http] forged\\u2029b\n");
  for (char32_t c : {0x202A, 0x202B, 0x202C,  0x202D,  0x202E,  0x2066,  0x2067, 0x2068, 0x2069,
                     0x200E, 0x200F, 0x061C,  0x2028,  0x2029,  0x00AD,  0x200B, 0x2060, 0xFEFF,
                     0xFFF9, 0x0600, 0x110BD, 0x1343F, 0x1D173, 0xE0001, 0xE007F}) {
    char escape[16];
    if (c > 0xFFFF) {
      std::snprintf(escape, sizeof escape, "\\U%08x", static_cast<unsigned>(c));
    } else {
      std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(c));
    }
    EXPECT_EQ(Logged("<" + Utf8(c) + ">"), "imgmcp warning [test] <" + std::string(escape) + ">\n")
        << std::hex << static_cast<unsigned>(c);
  }
  // Their neighbours, visible characters and other spaces, are written as they are.
  for (char32_t c : {0x00AC, 0x00AE, 0x0608, 0x061B, 0x200A, 0x2010, 0x2027, 0x202F, 0x2065, 0x2070,
                     0xFEFE, 0x1F600, 0xE0100}) {
    EXPECT_EQ(Logged("<" + Utf8(c) + ">"), "imgmcp warning [test] <" + Utf8(c) + ">\n")
        << std::hex << static_cast<unsigned>(c);
  }
}

TEST(LogTest, ALongMessageIsCutAndSaysSo) {
  const std::string line = Logged(std::string(kMaxMessageBytes + 1000, 'a'));
  EXPECT_LT(line.size(), kMaxMessageBytes + 100);
  EXPECT_NE(line.find("1000 more bytes not logged"), std::string::npos);
  EXPECT_EQ(line.back(), '\n');
}

TEST(LogTest, ClipBoundsAQuotedValueAtACharacterBoundary) {
  EXPECT_EQ(Clip("short"), "short");
  const std::string clipped = Clip(std::string(300, 'h'));
  EXPECT_EQ(clipped.substr(0, kMaxFieldBytes), std::string(kMaxFieldBytes, 'h'));
  EXPECT_NE(clipped.find("(300 bytes)"), std::string::npos);
  // "é" is two bytes: a cut after 3 bytes keeps one whole "é", never half of the second.
  EXPECT_EQ(Clip("\xc3\xa9\xc3\xa9", 3).substr(0, 3), "\xc3\xa9\xe2");  // "é" then "…"
}

TEST(LogTest, AThrottleLetsABurstThroughThenCountsWhatItHeldBack) {
  Throttle throttle("refusals", /*burst=*/2, std::chrono::hours(1));
  StderrCapture capture;
  for (int i = 0; i < 10; ++i) throttle.Write(Level::kWarning, "http", "refused");
  const std::string text = capture.Text();
  size_t lines = 0;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  EXPECT_EQ(lines, 2u) << text;
}

TEST(LogFormatTest, JsonLinesAreOneObjectWithTheCallsFieldsAndEscapes) {
  SetFormat(Format::kJson);
  StderrCapture capture;
  {
    CallScope scope({"4bf92f3577b34da6a3ce929d0e0e4736", "tools/call", "edit_image", "s\"1"});
    Write(Level::kInfo, "mcp", "quote \" back\\ nl\n esc\x1b bad\xff", 12.25);
  }
  Write(Level::kWarning, "main", "after");
  SetFormat(Format::kText);
  const std::string text = capture.Text();
  const size_t first_end = text.find('\n');
  ASSERT_NE(first_end, std::string::npos);
  const std::string first = text.substr(0, first_end);
  EXPECT_EQ(first.rfind("{\"time\":\"", 0), 0u) << first;
  EXPECT_NE(first.find("\"level\":\"info\",\"component\":\"mcp\",\"message\":\"quote \\\" "
                       "back\\\\ nl\\n esc\\u001b bad\\ufffd\""),
            std::string::npos)
      << first;
  EXPECT_NE(
      first.find(",\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\",\"method\":\"tools/"
                 "call\",\"tool\":\"edit_image\",\"session\":\"s\\\"1\",\"duration_ms\":12.2"),
      std::string::npos)
      << first;
  EXPECT_EQ(first.back(), '}');
  const std::string second = text.substr(first_end + 1);
  EXPECT_EQ(second.find("trace_id"), std::string::npos) << "the scope ended: " << second;
  EXPECT_NE(second.find("\"level\":\"warning\""), std::string::npos) << second;
}

TEST(LogFormatTest, JsonLinesEscapeFormatAndSeparatorCharacters) {
  SetFormat(Format::kJson);
  StderrCapture capture;
  Write(Level::kInfo, "mcp",
        "rlo " + Utf8(0x202E) + " ls " + Utf8(0x2028) + " ps " + Utf8(0x2029) + " lri " +
            Utf8(0x2066) + " alm " + Utf8(0x061C) + " tag " + Utf8(0xE0041) + " ok " +
            Utf8(0x00E9));
  SetFormat(Format::kText);
  const std::string text = capture.Text();
  // A code point above U+FFFF is a UTF-16 surrogate pair in JSON.
  EXPECT_NE(text.find("\"message\":\"rlo \\u202e ls \\u2028 ps \\u2029 lri \\u2066 alm "
                      "\\u061c tag \\udb40\\udc41 ok " +
                      Utf8(0x00E9) + "\""),
            std::string::npos)
      << text;
}

TEST(LogFormatTest, TextLinesEndWithTheTraceIdInsideATracedCall) {
  StderrCapture capture;
  {
    CallScope scope({"4bf92f3577b34da6a3ce929d0e0e4736", "tools/call", "", ""});
    Write(Level::kInfo, "mcp", "done", 3.0);
  }
  EXPECT_EQ(capture.Text(),
            "imgmcp info [mcp] done in 3.0 ms trace_id=4bf92f3577b34da6a3ce929d0e0e4736\n");
  Format format;
  EXPECT_TRUE(ParseFormat("json", &format));
  EXPECT_EQ(format, Format::kJson);
  EXPECT_FALSE(ParseFormat("JSON", &format));
}

}  // namespace
}  // namespace imgmcp::log
