#include "session/principal_scope.h"

#include "session/data_dir.h"

namespace imgmcp::session {
namespace {

constexpr char kScopeSeparator = '~';
constexpr size_t kMaxPrincipal = 64;

}  // namespace

bool IsValidPrincipal(std::string_view principal) {
  if (principal.size() > kMaxPrincipal) return false;
  for (char c : principal) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string ScopedSessionId(std::string_view principal, std::string_view session_id) {
  if (principal.empty()) return std::string(session_id);
  std::string stored;
  stored.reserve(principal.size() + 1 + session_id.size());
  stored.append(principal).push_back(kScopeSeparator);
  stored.append(session_id);
  return stored;
}

SessionScope SplitScopedSessionId(std::string_view stored_id) {
  const size_t at = stored_id.find(kScopeSeparator);
  if (at == std::string_view::npos || at == 0 || !IsValidPrincipal(stored_id.substr(0, at))) {
    return SessionScope{{}, stored_id};
  }
  return SessionScope{stored_id.substr(0, at), stored_id.substr(at + 1)};
}

bool IsValidStoredSessionId(std::string_view stored_id) {
  SessionScope scope = SplitScopedSessionId(stored_id);
  return IsValidSessionId(scope.session_id);
}

}  // namespace imgmcp::session
