// PgAuditTrail: PostgresSessionStore's audit trail (session/audit_log.h), the rows of
// imgmcp.audit (pg_schema.h v5). Thread-safe: it keeps no state besides the pool.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "session/audit_log.h"
#include "session/postgres/pg_connection.h"

namespace imgmcp::session::postgres {

class PgAuditTrail {
 public:
  explicit PgAuditTrail(PgPool& pool) : pool_(pool) {}

  // SessionStore::RecordAudit, ReadAudit and ForgetAudit.
  Status Insert(const AuditEvent& event);
  Result<std::vector<AuditEvent>> Read(const AuditQuery& query);
  Result<int64_t> Forget(int64_t before_ms);

 private:
  PgPool& pool_;
};

}  // namespace imgmcp::session::postgres
