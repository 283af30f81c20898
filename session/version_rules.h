// Rules every SessionStore applies the same way, in one place: which versions a commit accepts,
// the errors for bad and unknown session ids and versions, and the ListSessions cursor and page
// size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "session/session_store.h"

namespace imgmcp::session {

// The one session-id refusal, for tool arguments and stores alike: names `field` and what a
// session id may be (IsValidSessionId, session/data_dir.h).
Error InvalidSessionIdError(const std::string& id, const std::string& field = "session_id");
Error UnknownSessionError(const std::string& id);
// GetVersion's kNotFound for a session whose last issued number is `last_issued`.
Error NoSuchVersionError(const std::string& session_id, std::optional<int64_t> version,
                         int64_t last_issued);

// kInvalidArgument (naming the version and what is wrong) unless every version of a commit that
// follows `last_issued` is well formed: bytes, a file extension like ".png", a mime type and an
// operation, and a parent that is an earlier version (one of this commit's earlier ones counts).
Status ValidateNewVersions(const std::vector<NewVersion>& versions, int64_t last_issued);

// ListSessions paging: limit <= 0 means 100, capped at 1000.
int ClampPageSize(int limit);
// The cursor after a session with this activity time and id; opaque to clients.
std::string EncodeSessionCursor(int64_t updated_ms, const std::string& session_id);
// False for anything EncodeSessionCursor did not produce.
bool DecodeSessionCursor(const std::string& cursor, int64_t* updated_ms, std::string* session_id);

}  // namespace imgmcp::session
