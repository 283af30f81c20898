#include "session/idempotency.h"

#include "common/ascii.h"

namespace imgmcp::session {
namespace {

bool IsKeyChar(char c) { return IsAsciiAlnum(c) || c == '.' || c == '_' || c == ':' || c == '-'; }

}  // namespace

bool IsValidIdempotencyKey(std::string_view key) {
  if (key.empty() || key.size() > kMaxIdempotencyKeyLength) return false;
  for (char c : key) {
    if (!IsKeyChar(c)) return false;
  }
  return true;
}

Error InvalidIdempotencyKeyError(std::string_view key, const std::string& field) {
  std::string shown;
  for (char c : key.substr(0, 80)) shown += IsKeyChar(c) ? c : '?';
  if (key.size() > 80) shown += "…";
  return Error(ErrorCode::kInvalidArgument,
               "'" + field + "' is \"" + shown + "\" (" + std::to_string(key.size()) +
                   " characters); allowed: 1 to " + std::to_string(kMaxIdempotencyKeyLength) +
                   " characters from A-Z a-z 0-9 . _ : -");
}

Status CheckSameCall(const AppliedKey& applied, const std::string& digest, const std::string& key,
                     const std::string& session_id) {
  if (applied.digest == digest) return Status::Ok();
  return Error(ErrorCode::kInvalidArgument,
               "idempotency_key '" + key + "' was already used in session '" + session_id +
                   "' for a call with other arguments; nothing was done. Use a new "
                   "idempotency_key for a new call, or repeat the earlier call's arguments exactly "
                   "to get its result again");
}

}  // namespace imgmcp::session
