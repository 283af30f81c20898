// The audit trail (docs/security.md, "Audit trail"): who wrote what, and which tokens were refused,
// kept by each SessionStore beside its sessions (table audit in both stores), so that every
// process and replica on one store writes to one trail and `imgmcp audit` reads it. A row never
// holds image bytes, prompts or tokens.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace imgmcp::session {

struct AuditEvent {
  int64_t time_ms = 0;
  std::string principal;  // the principal's key (principal_scope.h); "" the local one
  std::string issuer;     // with OAuth: the token's iss, sub and client (client_id or azp)
  std::string subject;
  std::string client_id;
  std::string action;      // the tool ("generate_image", …), "tasks/cancel" or "token"
  std::string session_id;  // as its owner names it; "" when none
  std::optional<int64_t> version;
  std::string idempotency_key;
  std::string task_id;
  double cost_usd = 0;
  std::string trace_id;  // the request's W3C trace id, "" without one
  std::string outcome;   // "ok", or what went wrong ("error: …", "refused: …")
};

// The columns of table audit after its id, the same in SQLite and PostgreSQL, in AuditEvent's
// order.
inline constexpr char kAuditColumns[] =
    "time_ms, principal, issuer, subject, client_id, action, session_id, version, "
    "idempotency_key, task_id, cost_usd, trace_id, outcome";

struct AuditQuery {
  int64_t since_ms = 0;                  // events at or after this time
  std::optional<std::string> principal;  // only this principal (its key or its subject)
  int limit = 10'000;
};

}  // namespace imgmcp::session
