#include "session/sqlite/sqlite_spend.h"

#include <string>

#include "session/spend_rules.h"

namespace imgmcp::session::sqlite::spend {

Result<SpendTotals> Totals(SqliteDb& db, const SpendHold& hold) {
  ASSIGN_OR_RETURN(
      Statement st,
      db.Prepare(std::string("SELECT "
                             "coalesce(sum(CASE WHEN day = ?1 THEN usd END), 0), "
                             "coalesce(sum(CASE WHEN session_id = ?2 THEN usd END), 0), "
                             "coalesce(sum(CASE WHEN session_id = ?2 AND state = 'charged' "
                             "THEN usd END), 0), "
                             "coalesce(sum(CASE WHEN day = ?1 AND principal = ?4 THEN usd END), "
                             "0) "
                             "FROM spend WHERE (day = ?1 OR session_id = ?2) AND ") +
                 kSpendCountsAtPrefix + "?3)"));
  st.Bind(1, UtcDay(hold.now_ms)).Bind(2, hold.session_id).Bind(3, hold.now_ms);
  st.Bind(4, hold.principal);
  ASSIGN_OR_RETURN(bool row, st.Step());
  SpendTotals totals;
  if (row) {
    totals.day_usd = st.ColumnDouble(0);
    totals.session_usd = st.ColumnDouble(1);
    totals.session_charged_usd = st.ColumnDouble(2);
    totals.principal_day_usd = st.ColumnDouble(3);
  }
  return totals;
}

Result<int64_t> ReserveHold(SqliteDb& db, const SpendHold& hold, const SpendBudgets& budgets) {
  ASSIGN_OR_RETURN(const SpendTotals totals, Totals(db, hold));
  RETURN_IF_ERROR(CheckSpendBudgets(budgets, totals, hold));
  ASSIGN_OR_RETURN(Statement st,
                   db.Prepare(std::string("INSERT INTO spend(") + kSpendColumns +
                              ") VALUES(?,?,?,?,?,'held',?,?,0,0,0,0,0) RETURNING id"));
  st.Bind(1, UtcDay(hold.now_ms)).Bind(2, hold.session_id).Bind(3, hold.principal);
  st.Bind(4, hold.model).BindDouble(5, hold.estimate_usd).Bind(6, hold.expires_ms);
  st.Bind(7, hold.now_ms);
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return Error(ErrorCode::kInternal, "spend hold: the insert returned no id");
  const int64_t id = st.ColumnInt(0);
  RETURN_IF_ERROR(st.Run());  // steps to the end: the statement is done before it is reused
  return id;
}

Status Settle(SqliteDb& db, int64_t id, const SpendCharge& charge) {
  ASSIGN_OR_RETURN(Statement st,
                   db.Prepare("UPDATE spend SET state = 'charged', usd = ?2, model = ?3, "
                              "input_tokens = ?4, output_image_tokens = ?5, "
                              "output_text_tokens = ?6, thoughts_tokens = ?7, "
                              "grounding_queries = ?8 WHERE id = ?1 AND state = 'held' "
                              "RETURNING id"));
  const SpendTokens& t = charge.tokens;
  st.Bind(1, id).BindDouble(2, charge.usd).Bind(3, charge.priced_model).Bind(4, t.input);
  st.Bind(5, t.output_image).Bind(6, t.output_text).Bind(7, t.thoughts);
  st.Bind(8, t.grounding_queries);
  ASSIGN_OR_RETURN(bool row, st.Step());
  RETURN_IF_ERROR(st.Run());  // steps to the end: the statement is done before it is reused
  if (!row) {
    return Error(ErrorCode::kNotFound,
                 "no spend hold " + std::to_string(id) + ": released or settled already");
  }
  return Status::Ok();
}

Status Renew(SqliteDb& db, int64_t id, int64_t expires_ms) {
  ASSIGN_OR_RETURN(Statement st,
                   db.Prepare("UPDATE spend SET expires_ms = ? WHERE id = ? AND state = 'held'"));
  st.Bind(1, expires_ms).Bind(2, id);
  return st.Run();
}

Status Release(SqliteDb& db, int64_t id) {
  ASSIGN_OR_RETURN(Statement st, db.Prepare("DELETE FROM spend WHERE id = ? AND state = 'held'"));
  st.Bind(1, id);
  return st.Run();
}

Result<int64_t> CountCall(SqliteDb& db, const std::string& principal, int64_t window_ms,
                          int64_t forget_before_ms) {
  ASSIGN_OR_RETURN(Statement forget, db.Prepare("DELETE FROM call_counts WHERE window_ms < ?"));
  forget.Bind(1, forget_before_ms);
  RETURN_IF_ERROR(forget.Run());
  ASSIGN_OR_RETURN(Statement st, db.Prepare("INSERT INTO call_counts(principal, window_ms, calls) "
                                            "VALUES(?1, ?2, 1) ON CONFLICT(principal, window_ms) "
                                            "DO UPDATE SET calls = calls + 1 RETURNING calls"));
  st.Bind(1, principal).Bind(2, window_ms);
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return Error(ErrorCode::kInternal, "call count: the upsert returned no row");
  const int64_t calls = st.ColumnInt(0);
  RETURN_IF_ERROR(st.Run());  // steps to the end: the statement is done before it is reused
  return calls;
}

}  // namespace imgmcp::session::sqlite::spend
