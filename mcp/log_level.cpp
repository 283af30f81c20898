#include "mcp/log_level.h"

namespace imgmcp::mcp {

namespace {
constexpr LogLevel kAllLevels[] = {LogLevel::kDebug,   LogLevel::kInfo,     LogLevel::kNotice,
                                   LogLevel::kWarning, LogLevel::kError,    LogLevel::kCritical,
                                   LogLevel::kAlert,   LogLevel::kEmergency};
}  // namespace

const char* LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kNotice:
      return "notice";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
    case LogLevel::kCritical:
      return "critical";
    case LogLevel::kAlert:
      return "alert";
    case LogLevel::kEmergency:
      return "emergency";
  }
  return "info";
}

std::optional<LogLevel> ParseLogLevel(std::string_view name) {
  for (LogLevel level : kAllLevels) {
    if (name == LogLevelName(level)) return level;
  }
  return std::nullopt;
}

}  // namespace imgmcp::mcp
