#include "common/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <string>
#include <utility>

namespace imgmcp::log {
namespace {
std::atomic<int> g_min_level{static_cast<int>(Level::kInfo)};
std::atomic<int> g_format{static_cast<int>(Format::kText)};
thread_local const CallFields* t_call_fields = nullptr;

const char* LevelName(Level level) {
  switch (level) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarning:
      return "warning";
    case Level::kError:
      return "error";
    case Level::kOff:
      return "off";
  }
  return "info";
}

bool Printable(unsigned char c) { return c >= 0x20 && c < 0x7f; }

// The length of the UTF-8 sequence at s[i] when it is well formed and not a C1 control
// (U+0080..U+009F, which some terminals obey like ESC sequences); else 0.
size_t Utf8SequenceAt(std::string_view s, size_t i) {
  const auto byte = [&s](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  size_t n = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
    if (lead == 0xC2) low = 0xA0;  // C2 80..C2 9F are the C1 controls
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no UTF-16 surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;  // nothing above U+10FFFF
  }
  if (n == 0 || i + n > s.size() || byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return n;
}

void AppendHexEscape(const char* prefix, unsigned char c, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += prefix;
  out += kHex[c >> 4];
  out += kHex[c & 0xf];
}

// The code point of the well-formed `n`-byte UTF-8 sequence at `p`.
char32_t DecodeUtf8(const char* p, size_t n) {
  const auto byte = [p](size_t k) {
    return static_cast<char32_t>(static_cast<unsigned char>(p[k]));
  };
  if (n == 2) return (byte(0) & 0x1F) << 6 | (byte(1) & 0x3F);
  if (n == 3) return (byte(0) & 0x0F) << 12 | (byte(1) & 0x3F) << 6 | (byte(2) & 0x3F);
  return (byte(0) & 0x07) << 18 | (byte(1) & 0x3F) << 12 | (byte(2) & 0x3F) << 6 | (byte(3) & 0x3F);
}

// Whether `c` is a format character (Unicode general category Cf: the bidi controls U+202A..202E
// and U+2066..2069, the marks U+200E, U+200F and U+061C, zero-width characters, tags) or a line or
// paragraph separator (Zl U+2028, Zp U+2029): invisible, yet they reorder or break what a viewer
// shows, so a logged prompt with U+202E could show "gnp.exe" for "exe.png". Unicode 15.1's table.
bool IsFormatOrSeparator(char32_t c) {
  struct Range {
    char32_t first, last;
  };
  static constexpr Range kRanges[] = {{0xAD, 0xAD},       {0x600, 0x605},     {0x61C, 0x61C},
                                      {0x6DD, 0x6DD},     {0x70F, 0x70F},     {0x890, 0x891},
                                      {0x8E2, 0x8E2},     {0x180E, 0x180E},   {0x200B, 0x200F},
                                      {0x2028, 0x202E},   {0x2060, 0x2064},   {0x2066, 0x206F},
                                      {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD},
                                      {0x110CD, 0x110CD}, {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3},
                                      {0x1D173, 0x1D17A}, {0xE0001, 0xE0001}, {0xE0020, 0xE007F}};
  for (const Range& range : kRanges) {
    if (c < range.first) return false;
    if (c <= range.last) return true;
  }
  return false;
}

// How a line is written: text (a byte that is not UTF-8 as \xNN, a code point above U+FFFF as
// \UXXXXXXXX) or JSON (strings must be Unicode: such a byte as U+FFFD, written \ufffd; such a
// code point as its UTF-16 surrogate pair, \uXXXX\uXXXX).
enum class Style { kText, kJson };

void AppendCodePointEscape(char32_t c, Style style, std::string& out) {
  char escape[16];
  if (c <= 0xFFFF) {
    std::snprintf(escape, sizeof(escape), "\\u%04x", static_cast<unsigned>(c));
  } else if (style == Style::kText) {
    std::snprintf(escape, sizeof(escape), "\\U%08x", static_cast<unsigned>(c));
  } else {
    const char32_t v = c - 0x10000;
    std::snprintf(escape, sizeof(escape), "\\u%04x\\u%04x",
                  static_cast<unsigned>(0xD800 + (v >> 10)),
                  static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
  }
  out += escape;
}

// Appends what starts at s[i] (a byte >= 0x80): a well-formed UTF-8 character as it is, a C1
// control as \u00NN, a format or separator character as \uNNNN, a byte that is not UTF-8 per
// `style`. Returns the bytes consumed.
size_t AppendNonAscii(std::string_view s, size_t i, Style style, std::string& out) {
  if (const size_t n = Utf8SequenceAt(s, i); n > 0) {
    if (const char32_t c = DecodeUtf8(s.data() + i, n); IsFormatOrSeparator(c)) {
      AppendCodePointEscape(c, style, out);
    } else {
      out.append(s.data() + i, n);
    }
    return n;
  }
  if (static_cast<unsigned char>(s[i]) == 0xC2 && i + 1 < s.size() &&
      (static_cast<unsigned char>(s[i + 1]) & 0xE0) == 0x80) {
    AppendHexEscape("\\u00", static_cast<unsigned char>(s[i + 1]), out);
    return 2;
  }
  if (style == Style::kText) {
    AppendHexEscape("\\x", static_cast<unsigned char>(s[i]), out);
  } else {
    out += "\\ufffd";
  }
  return 1;
}

// Appends `s` with every byte a terminal could act on escaped: \n \r \t, other control bytes and
// DEL as \xNN, C1 controls as \u00NN, format and separator characters as \uNNNN (\UNNNNNNNN),
// bytes that are not UTF-8 as \xNN.
void AppendEscaped(std::string_view s, std::string& out) {
  size_t i = 0;
  while (i < s.size()) {
    size_t run = i;
    while (run < s.size() && Printable(static_cast<unsigned char>(s[run]))) ++run;
    out.append(s.data() + i, run - i);
    if (run == s.size()) return;
    i = run;
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      i += AppendNonAscii(s, i, Style::kText, out);
      continue;
    }
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      AppendHexEscape("\\x", c, out);
    }
    ++i;
  }
}

// The longest prefix of `text` of at most `max_bytes` that does not end inside a UTF-8 character.
std::string_view CutAtCharacter(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

// Appends `s` as the body of a JSON string: quotes, backslashes and control bytes escaped
// (\n, \u001b, C1 controls as \u0080.., format and separator characters as \u202e or a
// surrogate pair), bytes that are not UTF-8 as U+FFFD.
void AppendJsonEscaped(std::string_view s, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      i += AppendNonAscii(s, i, Style::kJson, out);
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
}

void AppendJsonField(std::string_view name, std::string_view value, std::string& out) {
  if (value.empty()) return;
  out += ",\"";
  out += name;
  out += "\":\"";
  AppendJsonEscaped(value, out);
  out += '"';
}

// UTC with milliseconds, e.g. 2026-12-02T08:40:00.123Z.
std::string UtcNow() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  tm parts{};
  gmtime_r(&now.tv_sec, &parts);
  char text[80];
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", parts.tm_year + 1900,
                parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec,
                now.tv_nsec / 1'000'000);
  return text;
}

std::string Milliseconds(double ms) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", ms);
  return text;
}

std::string TextLine(Level level, std::string_view component, std::string_view kept,
                     size_t cut_bytes, std::optional<double> duration_ms) {
  std::string line = "imgmcp ";
  line.reserve(32 + component.size() + kept.size());
  line += LevelName(level);
  line += " [";
  AppendEscaped(component, line);
  line += "] ";
  AppendEscaped(kept, line);
  if (cut_bytes > 0) line += "… (" + std::to_string(cut_bytes) + " more bytes not logged)";
  if (duration_ms) line += " in " + Milliseconds(*duration_ms) + " ms";
  if (t_call_fields != nullptr && !t_call_fields->trace_id.empty()) {
    line += " trace_id=" + t_call_fields->trace_id;
  }
  line += '\n';
  return line;
}

std::string JsonLine(Level level, std::string_view component, std::string_view kept,
                     size_t cut_bytes, std::optional<double> duration_ms) {
  std::string line = "{\"time\":\"" + UtcNow() + "\"";
  line.reserve(96 + component.size() + kept.size());
  AppendJsonField("level", LevelName(level), line);
  AppendJsonField("component", component, line);
  std::string message(kept);
  if (cut_bytes > 0) message += "… (" + std::to_string(cut_bytes) + " more bytes not logged)";
  AppendJsonField("message", message, line);
  if (const CallFields* call = t_call_fields) {
    AppendJsonField("trace_id", call->trace_id, line);
    AppendJsonField("method", call->method, line);
    AppendJsonField("tool", call->tool, line);
    AppendJsonField("session", call->session, line);
  }
  if (duration_ms) line += ",\"duration_ms\":" + Milliseconds(*duration_ms);
  line += "}\n";
  return line;
}

}  // namespace

void SetMinLevel(Level level) { g_min_level.store(static_cast<int>(level)); }
Level MinLevel() { return static_cast<Level>(g_min_level.load()); }

bool ParseLevel(std::string_view text, Level* out) {
  for (Level l : {Level::kDebug, Level::kInfo, Level::kWarning, Level::kError, Level::kOff}) {
    if (text == LevelName(l)) {
      *out = l;
      return true;
    }
  }
  return false;
}

std::string Clip(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::string clipped(CutAtCharacter(text, max_bytes));
  clipped += "… (" + std::to_string(text.size()) + " bytes)";
  return clipped;
}

void SetFormat(Format format) { g_format.store(static_cast<int>(format)); }

bool ParseFormat(std::string_view text, Format* out) {
  if (text == "text" || text == "json") {
    *out = text == "text" ? Format::kText : Format::kJson;
    return true;
  }
  return false;
}

CallScope::CallScope(CallFields fields) : previous_(t_call_fields), fields_(std::move(fields)) {
  t_call_fields = &fields_;
}

CallScope::~CallScope() { t_call_fields = previous_; }

void Write(Level level, std::string_view component, std::string_view message,
           std::optional<double> duration_ms) {
  if (static_cast<int>(level) < g_min_level.load(std::memory_order_relaxed)) return;
  const std::string_view kept = CutAtCharacter(message, kMaxMessageBytes);
  const size_t cut_bytes = message.size() - kept.size();
  const std::string line =
      static_cast<Format>(g_format.load(std::memory_order_relaxed)) == Format::kJson
          ? JsonLine(level, component, kept, cut_bytes, duration_ms)
          : TextLine(level, component, kept, cut_bytes, duration_ms);
  // One write(2) per line keeps lines from different threads whole.
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n <= 0) break;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

Throttle::Throttle(std::string what, size_t burst, std::chrono::steady_clock::duration window)
    : what_(std::move(what)), burst_(burst), window_(window) {}

void Throttle::Write(Level level, std::string_view component, std::string_view message) {
  if (static_cast<int>(level) < g_min_level.load(std::memory_order_relaxed)) return;
  const auto now = std::chrono::steady_clock::now();
  uint64_t held_back = 0;
  {
    MutexLock lock(mu_);
    if (in_window_ == 0 || now - window_start_ >= window_) {
      window_start_ = now;
      in_window_ = 0;
    }
    if (in_window_ >= burst_) {
      ++held_back_;
      return;
    }
    ++in_window_;
    held_back = std::exchange(held_back_, 0);
  }
  if (held_back > 0) {
    log::Write(level, component, std::to_string(held_back) + " more " + what_ + " were not logged");
  }
  log::Write(level, component, message);
}

}  // namespace imgmcp::log
