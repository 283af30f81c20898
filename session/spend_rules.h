// Rules both stores apply to the spend ledger (spend_ledger.h) the same way: its table's columns
// and sums, the UTC day a hold counts on, and the budget check with the refusal a client reads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"
#include "session/spend_ledger.h"

namespace imgmcp::session {

// The columns of table spend, the same in SQLite and PostgreSQL.
inline constexpr char kSpendColumns[] =
    "day, session_id, principal, model, usd, state, expires_ms, created_ms, input_tokens, "
    "output_image_tokens, output_text_tokens, thoughts_tokens, grounding_queries";
// A row that counts at ?N: a charge, or a hold not yet expired. The caller appends the time (a
// parameter) and the closing parenthesis.
inline constexpr char kSpendCountsAtPrefix[] = "(state = 'charged' OR expires_ms > ";
// What the session whose id is the SQL expression `session_id` was charged, reverted and cleared
// versions included: a scalar subquery over the spend table `table`, read with the session
// (SessionSnapshot::cost_usd).
std::string SessionChargedUsdSql(std::string_view table, std::string_view session_id);

// "YYYY-MM-DD", the UTC calendar day of `ms` since the epoch.
std::string UtcDay(int64_t ms);
// RFC 3339 of the next UTC midnight after `ms`: when a per-day budget resets.
std::string NextUtcMidnight(int64_t ms);

// kInvalidArgument for a hold no store may keep: an invalid session id, a negative or non-finite
// estimate, no model.
Status ValidateSpendHold(const SpendHold& hold);
// kInvalidArgument for a charge with a negative or non-finite cost or a negative count.
Status ValidateSpendCharge(const SpendCharge& charge);

// Ok when `hold` fits both budgets beside what `totals` hold already; otherwise
// kResourceExhausted naming the budget (its flag), what was spent and held so far, the estimate
// and, for the daily one, when it resets. Nothing was sent: the message says so.
Status CheckSpendBudgets(const SpendBudgets& budgets, const SpendTotals& totals,
                         const SpendHold& hold);
// Which budget refused, for an error CheckSpendBudgets made: "per_day", "per_user_day" or
// "per_session"; "" for any other error.
std::string_view RefusedBudget(const Error& error);

}  // namespace imgmcp::session
