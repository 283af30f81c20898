// Where the protocol layers report what the audit trail keeps (docs/security.md, "Audit trail"):
// every write a caller made (a tool call that generates, edits, resets or saves; a task cancel)
// and every refused token. The server's implementation writes them to its store. Never given
// image bytes, prompts or tokens.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mcp/caller.h"

namespace imgmcp::mcp {

struct AuditEntry {
  Caller caller;
  std::string action;      // the tool, "tasks/cancel" or "token"
  std::string session_id;  // as the caller names it; "" when none
  std::optional<int64_t> version;
  std::string idempotency_key;
  std::string task_id;
  double cost_usd = 0;
  std::string trace_id;  // the request's W3C trace id, "" without one
  std::string outcome;   // "ok", or what went wrong
};

class AuditTrail {
 public:
  virtual ~AuditTrail() = default;
  // Thread-safe. A failure to record is the implementation's to log: the caller goes on.
  virtual void Record(const AuditEntry& entry) = 0;
};

}  // namespace imgmcp::mcp
