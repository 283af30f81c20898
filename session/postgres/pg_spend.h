// PgSpendLedger: PostgresSessionStore's spend ledger (spend_ledger.h), the rows of imgmcp.spend
// (pg_schema.h v4). A hold is checked against the budgets and kept in one transaction under the
// advisory lock (kAdvisoryNamespace, kSpendLockKey), so holds from every replica on the database
// are decided one at a time, each seeing the ones before it. Thread-safe: it keeps no state
// besides the pool (no mutex).
#pragma once

#include <cstdint>

#include "common/result.h"
#include "session/postgres/pg_connection.h"
#include "session/spend_ledger.h"

namespace imgmcp::session::postgres {

// A double precision column of a text-format result: kDataLoss when it does not read as a number.
Result<double> ReadUsd(const PgResult& r, int row, int col);
// A USD amount as a parameter: the shortest text that reads back as the same double.
PgParam UsdParam(double usd);

class PgSpendLedger {
 public:
  explicit PgSpendLedger(PgPool& pool) : pool_(pool) {}

  // SessionStore::ReserveSpend, SettleSpend, RenewSpendHold, ReleaseSpend and SpendTotalsFor.
  Result<int64_t> Reserve(const SpendHold& hold, const SpendBudgets& budgets);
  Status Settle(int64_t id, const SpendCharge& charge);
  Status Renew(int64_t id, int64_t expires_ms);
  Status Release(int64_t id);
  Result<SpendTotals> TotalsFor(const SpendHold& hold);
  // SessionStore::CountCall: one statement, atomic against every replica's.
  Result<int64_t> CountCall(const std::string& principal, int64_t window_ms,
                            int64_t forget_before_ms);

 private:
  PgPool& pool_;
};

}  // namespace imgmcp::session::postgres
