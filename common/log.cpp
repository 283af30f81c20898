#include "common/log.h"

#include <unistd.h>

#include <atomic>
#include <string>
#include <utility>

namespace imgmcp::log {
namespace {
std::atomic<int> g_min_level{static_cast<int>(Level::kInfo)};

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

// Appends `s` with every byte a terminal could act on escaped: \n \r \t, other control bytes and
// DEL as \xNN, C1 controls as \u00NN, bytes that are not UTF-8 as \xNN.
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
      if (const size_t n = Utf8SequenceAt(s, i); n > 0) {
        out.append(s.data() + i, n);
        i += n;
      } else if (c == 0xC2 && i + 1 < s.size() &&
                 (static_cast<unsigned char>(s[i + 1]) & 0xE0) == 0x80) {
        AppendHexEscape("\\u00", static_cast<unsigned char>(s[i + 1]), out);
        i += 2;
      } else {
        AppendHexEscape("\\x", c, out);
        ++i;
      }
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

void Write(Level level, std::string_view component, std::string_view message) {
  if (static_cast<int>(level) < g_min_level.load(std::memory_order_relaxed)) return;
  const std::string_view kept = CutAtCharacter(message, kMaxMessageBytes);
  std::string line = "imgmcp ";
  line.reserve(32 + component.size() + kept.size());
  line += LevelName(level);
  line += " [";
  AppendEscaped(component, line);
  line += "] ";
  AppendEscaped(kept, line);
  if (kept.size() < message.size()) {
    line += "… (" + std::to_string(message.size() - kept.size()) + " more bytes not logged)";
  }
  line += '\n';
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
    std::lock_guard<std::mutex> lock(mu_);
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
