// StoreAuditTrail: the audit trail (mcp/audit_trail.h) kept in the session store
// (SessionStore::RecordAudit, session/audit_log.h), stamped with the wall clock. A failure to
// record is logged; the call it describes has happened all the same.
#pragma once

#include "common/clock.h"
#include "mcp/audit_trail.h"
#include "session/session_store.h"

namespace imgmcp::tools {

class StoreAuditTrail final : public mcp::AuditTrail {
 public:
  // `store` and `clock` must outlive this object.
  StoreAuditTrail(session::SessionStore& store, const Clock& clock)
      : store_(store), clock_(clock) {}

  void Record(const mcp::AuditEntry& entry) override;

 private:
  session::SessionStore& store_;
  const Clock& clock_;
};

}  // namespace imgmcp::tools
