#include "session/version_rules.h"

#include <algorithm>
#include <string_view>

#include "common/base64.h"
#include "common/decimal.h"
#include "session/data_dir.h"
#include "session/principal_scope.h"

namespace imgmcp::session {
namespace {

constexpr int kMaxPageSize = 1000;
constexpr int kDefaultPageSize = 100;
constexpr std::string_view kSessionCursorPrefix = "c1:";

}  // namespace

Error InvalidSessionIdError(const std::string& id, const std::string& field) {
  const std::string shown = id.size() > 80 ? id.substr(0, 80) + "…" : id;
  return MakeError(ErrorCode::kInvalidArgument,
                   "'" + field + "' \"" + shown +
                       "\" is not valid: use 1 to 64 characters from A-Z a-z 0-9 . _ -, starting "
                       "with a letter or digit");
}

Error UnknownSessionError(const std::string& id) {
  return MakeError(ErrorCode::kNotFound, "unknown session \"" + id + "\"");
}

Error NoSuchVersionError(const std::string& session_id, std::optional<int64_t> version,
                         int64_t last_issued) {
  if (!version.has_value()) {
    return MakeError(ErrorCode::kNotFound, "session " + session_id + " has no images");
  }
  const bool issued = *version >= 1 && *version <= last_issued;
  return MakeError(ErrorCode::kNotFound, "session " + session_id + " has no version " +
                                             std::to_string(*version) +
                                             (issued ? " (it was cleared or pruned)" : "") +
                                             "; current is " + std::to_string(last_issued));
}

Status ValidateNewVersions(const std::vector<NewVersion>& versions, int64_t last_issued) {
  if (versions.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "a commit needs at least one version");
  }
  for (size_t i = 0; i < versions.size(); ++i) {
    const NewVersion& nv = versions[i];
    const int64_t number = last_issued + 1 + static_cast<int64_t>(i);
    const std::string which =
        versions.size() == 1 ? "" : " (version " + std::to_string(number) + " of this commit)";
    if (nv.bytes.empty()) {
      return MakeError(ErrorCode::kInvalidArgument, "an image has no bytes" + which);
    }
    if (!IsValidFileExtension(nv.file_extension)) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          "invalid file_extension \"" + nv.file_extension + "\" (expected e.g. \".png\")" + which);
    }
    if (nv.mime_type.empty() || nv.operation.empty()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "a version needs a mime_type and an operation" + which);
    }
    for (const std::string* text :
         {&nv.prompt, &nv.operation, &nv.mime_type, &nv.backend, &nv.model, &nv.details}) {
      if (text->find('\0') != std::string::npos) {
        // PostgreSQL cannot store a NUL in text and C strings end at one: refused, never cut.
        return MakeError(ErrorCode::kInvalidArgument,
                         "a version's text contains a NUL character" + which);
      }
    }
    if (nv.parent.has_value() && (*nv.parent < 1 || *nv.parent >= number)) {
      return MakeError(ErrorCode::kInvalidArgument, "parent version " + std::to_string(*nv.parent) +
                                                        " is not an earlier version" + which);
    }
  }
  return Status::Ok();
}

int ClampPageSize(int limit) {
  if (limit <= 0) return kDefaultPageSize;
  return std::min(limit, kMaxPageSize);
}

std::string EncodeSessionCursor(int64_t updated_ms, const std::string& session_id) {
  return Base64Encode(std::string(kSessionCursorPrefix) + std::to_string(updated_ms) + ":" +
                      session_id);
}

bool DecodeSessionCursor(const std::string& cursor, int64_t* updated_ms, std::string* session_id) {
  Result<std::string> raw = Base64Decode(cursor);
  if (!raw.ok() || raw->compare(0, kSessionCursorPrefix.size(), kSessionCursorPrefix) != 0)
    return false;
  const std::string_view rest = std::string_view(*raw).substr(kSessionCursorPrefix.size());
  const size_t colon = rest.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  const std::optional<int64_t> ms = ParseDecimal<int64_t>(rest.substr(0, colon));
  if (!ms) return false;
  *updated_ms = *ms;
  *session_id = std::string(rest.substr(colon + 1));
  return IsValidStoredSessionId(*session_id);
}

}  // namespace imgmcp::session
