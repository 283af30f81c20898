// `imgmcp audit [--since T] [--principal P] [--format json|text] [store flags]`: prints the audit
// trail (session/audit_log.h) of the store the other flags name (--data-dir, --store), oldest
// first, to stdout, and exits. T is a UTC date (2026-12-06) or time (2026-12-06T17:00:00Z);
// P a principal's key or a token subject.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/result.h"
#include "session/audit_log.h"

namespace imgmcp::app {

// True when the arguments ask for the audit command (its first is "audit").
bool IsAuditCommand(const std::vector<std::string>& args);

// What the audit command was asked for, and the flags left for the store.
struct AuditRequest {
  session::AuditQuery query;
  bool json = false;
  std::vector<std::string> store_args;
};
// kInvalidArgument naming the flag for a malformed one.
Result<AuditRequest> ParseAuditArgs(const std::vector<std::string>& args);

// One event as JSON, and as a line of text.
Json AuditEventJson(const session::AuditEvent& event);
std::string AuditEventLine(const session::AuditEvent& event);

// Runs the command: the exit code (0, 1 for a failure, 2 for bad arguments).
int RunAuditCommand(const std::vector<std::string>& args,
                    const std::function<std::optional<std::string>(const std::string&)>& env);

}  // namespace imgmcp::app
