#include "session/postgres/pg_audit.h"

#include <string>

#include "session/postgres/pg_spend.h"  // ReadUsd, UsdParam

namespace imgmcp::session::postgres {

Status PgAuditTrail::Insert(const AuditEvent& e) {
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  RETURN_IF_ERROR(
      conn->Exec(std::string("INSERT INTO imgmcp.audit(") + kAuditColumns +
                     ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
                 {PgParam::Int(e.time_ms), PgParam::Text(e.principal), PgParam::Text(e.issuer),
                  PgParam::Text(e.subject), PgParam::Text(e.client_id), PgParam::Text(e.action),
                  PgParam::Text(e.session_id), PgParam::OptionalInt(e.version),
                  PgParam::Text(e.idempotency_key), PgParam::Text(e.task_id), UsdParam(e.cost_usd),
                  PgParam::Text(e.trace_id), PgParam::Text(e.outcome)},
                 "recording an audit event"));
  return Status::Ok();
}

Result<std::vector<AuditEvent>> PgAuditTrail::Read(const AuditQuery& query) {
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  ASSIGN_OR_RETURN(
      PgResult r,
      conn->Exec(std::string("SELECT ") + kAuditColumns +
                     " FROM imgmcp.audit WHERE time_ms >= $1 AND ($2::text IS NULL OR principal "
                     "= $2 OR subject = $2) ORDER BY time_ms, id LIMIT $3",
                 {PgParam::Int(query.since_ms),
                  query.principal ? PgParam::Text(*query.principal) : PgParam::Null(),
                  PgParam::Int(query.limit)},
                 "reading the audit trail"));
  std::vector<AuditEvent> events;
  for (int i = 0; i < r.Rows(); ++i) {
    AuditEvent e;
    e.time_ms = r.Int(i, 0);
    e.principal = r.Text(i, 1);
    e.issuer = r.Text(i, 2);
    e.subject = r.Text(i, 3);
    e.client_id = r.Text(i, 4);
    e.action = r.Text(i, 5);
    e.session_id = r.Text(i, 6);
    if (!r.IsNull(i, 7)) e.version = r.Int(i, 7);
    e.idempotency_key = r.Text(i, 8);
    e.task_id = r.Text(i, 9);
    ASSIGN_OR_RETURN(e.cost_usd, ReadUsd(r, i, 10));
    e.trace_id = r.Text(i, 11);
    e.outcome = r.Text(i, 12);
    events.push_back(std::move(e));
  }
  return events;
}

Result<int64_t> PgAuditTrail::Forget(int64_t before_ms) {
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  ASSIGN_OR_RETURN(PgResult r,
                   conn->Exec("DELETE FROM imgmcp.audit WHERE time_ms < $1 RETURNING id",
                              {PgParam::Int(before_ms)}, "forgetting old audit events"));
  return static_cast<int64_t>(r.Rows());
}

}  // namespace imgmcp::session::postgres
