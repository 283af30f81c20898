#include "server/tools/store_audit_trail.h"

#include "common/log.h"

namespace imgmcp::tools {

void StoreAuditTrail::Record(const mcp::AuditEntry& entry) {
  session::AuditEvent event;
  event.time_ms = WallMs(clock_);
  event.principal = entry.caller.principal;
  event.issuer = entry.caller.issuer;
  event.subject = entry.caller.subject;
  event.client_id = entry.caller.client_id;
  event.action = entry.action;
  event.session_id = entry.session_id;
  event.version = entry.version;
  event.idempotency_key = entry.idempotency_key;
  event.task_id = entry.task_id;
  event.cost_usd = entry.cost_usd;
  event.trace_id = entry.trace_id;
  event.outcome = entry.outcome;
  if (Status recorded = store_.RecordAudit(event); !recorded.ok()) {
    log::Warn("tools",
              "the audit trail did not record " + entry.action + ": " + recorded.error().message);
  }
}

}  // namespace imgmcp::tools
