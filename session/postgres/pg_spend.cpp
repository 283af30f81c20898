#include "session/postgres/pg_spend.h"

#include <charconv>
#include <string>

#include "session/postgres/pg_schema.h"
#include "session/spend_rules.h"

namespace imgmcp::session::postgres {

// A double precision column of a text-format result (PostgreSQL 12 and later write the shortest
// text that reads back as the same double).
Result<double> ReadUsd(const PgResult& r, int row, int col) {
  const std::string text = r.Text(row, col);
  double usd = 0;
  const std::from_chars_result end = std::from_chars(text.data(), text.data() + text.size(), usd);
  if (text.empty() || end.ec != std::errc() || end.ptr != text.data() + text.size()) {
    return MakeError(ErrorCode::kDataLoss,
                     "the spend ledger holds an amount that is not a number: \"" + text + "\"");
  }
  return usd;
}

PgParam UsdParam(double usd) {
  char text[32];
  const std::to_chars_result end = std::to_chars(text, text + sizeof text, usd);
  return PgParam::Text(std::string(text, end.ptr));
}

namespace {

// The charges and live holds at hold.now_ms on its UTC day and in its session, read on `conn`
// (in the caller's transaction, if any).
Result<SpendTotals> ReadTotals(PgConnection& conn, const SpendHold& hold) {
  ASSIGN_OR_RETURN(
      PgResult r,
      conn.Exec(std::string("SELECT coalesce(sum(usd) FILTER (WHERE day = $1), 0), "
                            "coalesce(sum(usd) FILTER (WHERE session_id = $2), 0), "
                            "coalesce(sum(usd) FILTER (WHERE session_id = $2 AND state = "
                            "'charged'), 0), coalesce(sum(usd) FILTER (WHERE day = $1 AND "
                            "principal = $4), 0) FROM imgmcp.spend WHERE (day = $1 OR "
                            "session_id = $2) AND ") +
                    kSpendCountsAtPrefix + "$3)",
                {PgParam::Text(UtcDay(hold.now_ms)), PgParam::Text(hold.session_id),
                 PgParam::Int(hold.now_ms), PgParam::Text(hold.principal)},
                "summing the spend ledger"));
  SpendTotals totals;
  ASSIGN_OR_RETURN(totals.day_usd, ReadUsd(r, 0, 0));
  ASSIGN_OR_RETURN(totals.session_usd, ReadUsd(r, 0, 1));
  ASSIGN_OR_RETURN(totals.session_charged_usd, ReadUsd(r, 0, 2));
  ASSIGN_OR_RETURN(totals.principal_day_usd, ReadUsd(r, 0, 3));
  return totals;
}

}  // namespace

// Under READ COMMITTED each statement reads what was committed before it began: the sums, read
// after the lock is granted, include every hold kept by the transactions that held it before.
Result<int64_t> PgSpendLedger::Reserve(const SpendHold& hold, const SpendBudgets& budgets) {
  RETURN_IF_ERROR(ValidateSpendHold(hold));
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  int64_t id = 0;
  RETURN_IF_ERROR(InTransaction(
      *conn, "keeping a spend hold",
      [&]() -> Status {
        RETURN_IF_ERROR(conn->Run("SELECT pg_advisory_xact_lock(" +
                                      std::to_string(kAdvisoryNamespace) + ", " +
                                      std::to_string(kSpendLockKey) + ")",
                                  "waiting for the spend ledger"));
        ASSIGN_OR_RETURN(SpendTotals totals, ReadTotals(*conn, hold));
        RETURN_IF_ERROR(CheckSpendBudgets(budgets, totals, hold));
        ASSIGN_OR_RETURN(
            PgResult r,
            conn->Exec(std::string("INSERT INTO imgmcp.spend(") + kSpendColumns +
                           ") VALUES ($1, $2, $3, $4, $5, 'held', $6, $7, 0, 0, 0, 0, 0) "
                           "RETURNING id",
                       {PgParam::Text(UtcDay(hold.now_ms)), PgParam::Text(hold.session_id),
                        PgParam::Text(hold.principal), PgParam::Text(hold.model),
                        UsdParam(hold.estimate_usd), PgParam::Int(hold.expires_ms),
                        PgParam::Int(hold.now_ms)},
                       "keeping a spend hold"));
        id = r.Int(0, 0);
        return Status::Ok();
      },
      nullptr));
  return id;
}

Status PgSpendLedger::Settle(int64_t id, const SpendCharge& charge) {
  RETURN_IF_ERROR(ValidateSpendCharge(charge));
  const SpendTokens& t = charge.tokens;
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  ASSIGN_OR_RETURN(
      PgResult r,
      conn->Exec("UPDATE imgmcp.spend SET state = 'charged', usd = $2, model = $3, "
                 "input_tokens = $4, output_image_tokens = $5, output_text_tokens = $6, "
                 "thoughts_tokens = $7, grounding_queries = $8 WHERE id = $1 AND state = 'held' "
                 "RETURNING 1",
                 {PgParam::Int(id), UsdParam(charge.usd), PgParam::Text(charge.priced_model),
                  PgParam::Int(t.input), PgParam::Int(t.output_image), PgParam::Int(t.output_text),
                  PgParam::Int(t.thoughts), PgParam::Int(t.grounding_queries)},
                 "settling a spend hold"));
  if (r.Rows() == 0) {
    return MakeError(ErrorCode::kNotFound,
                     "no spend hold " + std::to_string(id) + ": released or settled already");
  }
  return Status::Ok();
}

Status PgSpendLedger::Renew(int64_t id, int64_t expires_ms) {
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  RETURN_IF_ERROR(
      conn->Exec("UPDATE imgmcp.spend SET expires_ms = $2 WHERE id = $1 AND state = 'held'",
                 {PgParam::Int(id), PgParam::Int(expires_ms)}, "renewing a spend hold"));
  return Status::Ok();
}

Status PgSpendLedger::Release(int64_t id) {
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  RETURN_IF_ERROR(conn->Exec("DELETE FROM imgmcp.spend WHERE id = $1 AND state = 'held'",
                             {PgParam::Int(id)}, "releasing a spend hold"));
  return Status::Ok();
}

Result<SpendTotals> PgSpendLedger::TotalsFor(const SpendHold& hold) {
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  return ReadTotals(*conn, hold);
}

Result<int64_t> PgSpendLedger::CountCall(const std::string& principal, int64_t window_ms,
                                         int64_t forget_before_ms) {
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  ASSIGN_OR_RETURN(
      PgResult r,
      conn->Exec(
          "WITH forgotten AS (DELETE FROM imgmcp.call_counts WHERE window_ms < $3) "
          "INSERT INTO imgmcp.call_counts AS c (principal, window_ms, calls) "
          "VALUES ($1, $2, 1) ON CONFLICT (principal, window_ms) "
          "DO UPDATE SET calls = c.calls + 1 RETURNING calls",
          {PgParam::Text(principal), PgParam::Int(window_ms), PgParam::Int(forget_before_ms)},
          "counting a call"));
  if (r.Rows() != 1) return Error(ErrorCode::kInternal, "call count: the upsert returned no row");
  return r.Int(0, 0);
}

}  // namespace imgmcp::session::postgres
