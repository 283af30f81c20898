// Logging to stderr. stdout belongs to the MCP stream and is never written here.
// The minimum level is process-wide because stderr is: main.cpp sets it once from flags.
//
// Log lines often carry what a client sent (a refused Host header, a method name, clientInfo).
// So every line is made safe here, in one place: control characters, C1 controls, format and
// separator characters (Unicode Cf, Zl, Zp: bidi overrides, U+2028) and bytes that are not UTF-8
// are written as escapes (\n, \t, \x1b, \u009b, \u202e), so logged text can neither move the
// operator's terminal, forge a line nor read differently from what it holds; and a message is
// cut at kMaxMessageBytes. Callers quote client values through Clip(), and lines a client can
// cause at will (refusals before authentication) go through a Throttle.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/thread_annotations.h"

namespace imgmcp::log {

enum class Level { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };

void SetMinLevel(Level level);
Level MinLevel();
// Parses "debug|info|warning|error|off"; returns false for anything else.
bool ParseLevel(std::string_view text, Level* out);

// Text: "imgmcp <level> [<component>] <message>" (plus " trace_id=…" inside a traced call).
// JSON: one object per line, {"time","level","component","message"} and, inside a call, its
// "trace_id", "method", "tool", "session" (and "duration_ms" on the line that ends it).
enum class Format { kText, kJson };
void SetFormat(Format format);
// Parses "text|json"; returns false for anything else.
bool ParseFormat(std::string_view text, Format* out);

// What the log lines of one MCP call carry, for the thread running it: set by CallScope, read
// by Write. Empty fields are left out.
struct CallFields {
  std::string trace_id;  // of a valid W3C traceparent (common/trace_context.h)
  std::string method;    // e.g. "tools/call"
  std::string tool;
  std::string session;
};

// Sets the calling thread's CallFields for its lifetime and restores the previous ones after.
class CallScope {
 public:
  explicit CallScope(CallFields fields);
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  const CallFields* previous_;
  CallFields fields_;
};

// The longest message written whole; a longer one is cut, saying how many bytes were left out.
inline constexpr size_t kMaxMessageBytes = 8192;
// What Clip() keeps of one quoted value by default.
inline constexpr size_t kMaxFieldBytes = 200;

// Writes one line "imgmcp <level> [<component>] <message>" to stderr, atomically per line, with
// the escapes and the cut described above.
// `duration_ms`, when set, is how long the call the line ends took.
void Write(Level level, std::string_view component, std::string_view message,
           std::optional<double> duration_ms = std::nullopt);

inline void Debug(std::string_view c, std::string_view m) { Write(Level::kDebug, c, m); }
inline void Info(std::string_view c, std::string_view m) { Write(Level::kInfo, c, m); }
inline void Warn(std::string_view c, std::string_view m) { Write(Level::kWarning, c, m); }
inline void Error(std::string_view c, std::string_view m) { Write(Level::kError, c, m); }

// `text` when it has at most `max_bytes` bytes; else its first `max_bytes` (cut at a UTF-8
// character boundary) followed by "… (N bytes)". For a client-sent value quoted in a log line.
std::string Clip(std::string_view text, size_t max_bytes = kMaxFieldBytes);

// Lets at most `burst` lines of one kind through per `window`, and counts the rest: the first line
// let through after some were held back is preceded by one line "N more <what> were not logged".
// For lines a client can cause at will (a refused Host header, a wrong token). Thread-safe.
class Throttle {
 public:
  explicit Throttle(std::string what, size_t burst = 5,
                    std::chrono::steady_clock::duration window = std::chrono::seconds(1));
  void Write(Level level, std::string_view component, std::string_view message);

 private:
  const std::string what_;
  const size_t burst_;
  const std::chrono::steady_clock::duration window_;
  Mutex mu_;  // guards window_start_, in_window_, held_back_
  std::chrono::steady_clock::time_point window_start_ GUARDED_BY(mu_);
  size_t in_window_ GUARDED_BY(mu_) = 0;    // lines let through in the current window
  uint64_t held_back_ GUARDED_BY(mu_) = 0;  // lines counted, not written, since the last summary
};

}  // namespace imgmcp::log
