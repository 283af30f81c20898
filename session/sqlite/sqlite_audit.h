// The audit trail's rows in SQLite (session/audit_log.h; table audit, schema v7).
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "session/audit_log.h"
#include "session/sqlite/sqlite_db.h"

namespace imgmcp::session::sqlite::audit {

Status Insert(SqliteDb& db, const AuditEvent& event);
Result<std::vector<AuditEvent>> Read(SqliteDb& db, const AuditQuery& query);
Result<int64_t> Forget(SqliteDb& db, int64_t before_ms);  // inside a write transaction

}  // namespace imgmcp::session::sqlite::audit
