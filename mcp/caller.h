// Who makes a request, as its transport authenticated them: whose tasks it creates and sees, and
// whose sessions its tools reach (docs/design.md, "Sessions per person").
#pragma once

#include <string>

namespace imgmcp::mcp {

struct Caller {
  // Whose tasks (task_runner.h): the transport's digest of the request's credentials (the
  // --auth-token's, an OAuth principal's key); "" without any (stdio).
  std::string owner;
  // Whose sessions: an OAuth principal's key (session/principal_scope.h), "" for the server's one
  // local principal (stdio, --auth-token, no authentication).
  std::string principal;
  // When not "": the one session of `principal` this caller reaches, read-only — a gallery link's
  // bearer (gallery_links.h). Every other session of the principal is "not found" to it.
  std::string only_session;
  // For the audit trail (OAuth only, else ""): the token's issuer and subject, and the client it
  // was issued to.
  std::string issuer;
  std::string subject;
  std::string client_id;
};

}  // namespace imgmcp::mcp
