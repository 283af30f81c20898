#include "common/trace_context.h"

#include "common/random.h"

namespace imgmcp {
namespace {

bool IsLowerHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool AllZero(std::string_view s) { return s.find_first_not_of('0') == std::string_view::npos; }

}  // namespace

std::optional<TraceParent> ParseTraceParent(std::string_view text) {
  // version(2) - trace-id(32) - parent-id(16) - flags(2): 55 characters.
  constexpr size_t kLength = 55;
  if (text.size() < kLength || text[2] != '-' || text[35] != '-' || text[52] != '-') {
    return std::nullopt;
  }
  const std::string_view version = text.substr(0, 2);
  if (!IsLowerHex(version) || version == "ff") return std::nullopt;
  if (text.size() > kLength && (version == "00" || text[kLength] != '-')) return std::nullopt;
  TraceParent parsed{std::string(text.substr(3, 32)), std::string(text.substr(36, 16)),
                     std::string(text.substr(53, 2))};
  if (!IsLowerHex(parsed.trace_id) || !IsLowerHex(parsed.parent_id) || !IsLowerHex(parsed.flags) ||
      AllZero(parsed.trace_id) || AllZero(parsed.parent_id)) {
    return std::nullopt;
  }
  return parsed;
}

std::string ChildTraceParent(const TraceParent& parent) {
  std::string span = RandomHex(8);
  if (AllZero(span)) span[15] = '1';
  return "00-" + parent.trace_id + "-" + span + "-" + parent.flags;
}

}  // namespace imgmcp
