// Logging to stderr. stdout belongs to the MCP stream and is never written here.
// The minimum level is process-wide because stderr is: main.cpp sets it once from flags.
#pragma once

#include <string_view>

namespace imgmcp::log {

enum class Level { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };

void SetMinLevel(Level level);
Level MinLevel();
// Parses "debug|info|warning|error|off"; returns false for anything else.
bool ParseLevel(std::string_view text, Level* out);

// Writes one line "imgmcp <level> [<component>] <message>" to stderr, atomically per line.
void Write(Level level, std::string_view component, std::string_view message);

inline void Debug(std::string_view c, std::string_view m) { Write(Level::kDebug, c, m); }
inline void Info(std::string_view c, std::string_view m) { Write(Level::kInfo, c, m); }
inline void Warn(std::string_view c, std::string_view m) { Write(Level::kWarning, c, m); }
inline void Error(std::string_view c, std::string_view m) { Write(Level::kError, c, m); }

}  // namespace imgmcp::log
