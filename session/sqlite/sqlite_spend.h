// The embedded store's spend ledger (table spend, session/sqlite/schema.h v6): the SQL on one
// SqliteDb. The caller runs ReserveHold in a write transaction (SqlitePool::InWriteTransaction,
// an IMMEDIATE one): SQLite's write lock serialises holds across every process on the data dir.
// The rules (what a hold may be, the budget check) are session/spend_rules.h's.
#pragma once

#include <cstdint>

#include "common/result.h"
#include "session/spend_ledger.h"
#include "session/sqlite/sqlite_db.h"

namespace imgmcp::session::sqlite::spend {

// The charges and live holds of `hold`'s UTC day and session (SpendTotals).
Result<SpendTotals> Totals(SqliteDb& db, const SpendHold& hold);
// Checks `hold` against `budgets` beside Totals and inserts it; its id. Inside a write
// transaction.
Result<int64_t> ReserveHold(SqliteDb& db, const SpendHold& hold, const SpendBudgets& budgets);
// Hold `id` becomes a charge; kNotFound when there is no such hold.
Status Settle(SqliteDb& db, int64_t id, const SpendCharge& charge);
// Moves hold `id`'s expiry, if it is still a hold.
Status Renew(SqliteDb& db, int64_t id, int64_t expires_ms);
// Drops hold `id` if it is still a hold.
Status Release(SqliteDb& db, int64_t id);
// SessionStore::CountCall, inside a write transaction.
Result<int64_t> CountCall(SqliteDb& db, const std::string& principal, int64_t window_ms,
                          int64_t forget_before_ms);

}  // namespace imgmcp::session::sqlite::spend
