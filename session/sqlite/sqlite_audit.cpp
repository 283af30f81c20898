#include "session/sqlite/sqlite_audit.h"

#include <string>

namespace imgmcp::session::sqlite::audit {

Status Insert(SqliteDb& db, const AuditEvent& e) {
  ASSIGN_OR_RETURN(Statement st, db.Prepare(std::string("INSERT INTO audit(") + kAuditColumns +
                                            ") VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)"));
  st.Bind(1, e.time_ms).Bind(2, e.principal).Bind(3, e.issuer).Bind(4, e.subject);
  st.Bind(5, e.client_id).Bind(6, e.action).Bind(7, e.session_id).Bind(8, e.version);
  st.Bind(9, e.idempotency_key).Bind(10, e.task_id).BindDouble(11, e.cost_usd);
  st.Bind(12, e.trace_id).Bind(13, e.outcome);
  return st.Run();
}

Result<std::vector<AuditEvent>> Read(SqliteDb& db, const AuditQuery& query) {
  ASSIGN_OR_RETURN(
      Statement st,
      db.Prepare(std::string("SELECT ") + kAuditColumns +
                 " FROM audit WHERE time_ms >= ?1 AND (?2 IS NULL OR principal = ?2 OR subject = "
                 "?2) ORDER BY time_ms, id LIMIT ?3"));
  st.Bind(1, query.since_ms);
  if (query.principal) st.Bind(2, *query.principal);
  st.Bind(3, static_cast<int64_t>(query.limit));
  std::vector<AuditEvent> events;
  RETURN_IF_ERROR(st.ForEachRow([&](Statement& row) {
    AuditEvent e;
    e.time_ms = row.ColumnInt(0);
    e.principal = row.ColumnText(1);
    e.issuer = row.ColumnText(2);
    e.subject = row.ColumnText(3);
    e.client_id = row.ColumnText(4);
    e.action = row.ColumnText(5);
    e.session_id = row.ColumnText(6);
    if (!row.ColumnIsNull(7)) e.version = row.ColumnInt(7);
    e.idempotency_key = row.ColumnText(8);
    e.task_id = row.ColumnText(9);
    e.cost_usd = row.ColumnDouble(10);
    e.trace_id = row.ColumnText(11);
    e.outcome = row.ColumnText(12);
    events.push_back(std::move(e));
  }));
  return events;
}

Result<int64_t> Forget(SqliteDb& db, int64_t before_ms) {
  ASSIGN_OR_RETURN(Statement st, db.Prepare("DELETE FROM audit WHERE time_ms < ? RETURNING id"));
  st.Bind(1, before_ms);
  int64_t removed = 0;
  RETURN_IF_ERROR(st.ForEachRow([&](Statement&) { ++removed; }));
  return removed;
}

}  // namespace imgmcp::session::sqlite::audit
