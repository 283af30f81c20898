// Sessions per person (docs/design.md, "Sessions per person"): under OAuth every principal has its
// own namespace of session ids, so two people's `session_id: "fox"` are two chains and neither can
// name the other's. A store keeps each session under its *stored id*: the session id itself for
// the local principal "" (stdio, --auth-token, no authentication: everything as before team
// serving), else "<principal>~<session id>". '~' never occurs in a session id
// (IsValidSessionId), so the namespaces cannot meet, and a stored id is still one plain path
// component.
#pragma once

#include <string>
#include <string_view>

namespace imgmcp::session {

// A principal as stores keep it: "" (the local one) or 1–64 lowercase hex digits (an OAuth
// principal's key: a digest of its issuer and subject).
bool IsValidPrincipal(std::string_view principal);

// The id `session_id` of `principal` is stored under. Both must be valid.
std::string ScopedSessionId(std::string_view principal, std::string_view session_id);

// A stored id taken apart: whose session, and the id its owner knows it by.
struct SessionScope {
  std::string_view principal;   // "" for the local principal
  std::string_view session_id;  // as the owner named it
};
// For an id that is not a valid stored id: the local principal and the id as given.
SessionScope SplitScopedSessionId(std::string_view stored_id);

// A session id (IsValidSessionId), optionally scoped to a principal ("<principal>~<id>").
bool IsValidStoredSessionId(std::string_view stored_id);

}  // namespace imgmcp::session
