#include "session/spend_rules.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "common/clock.h"
#include "common/usd.h"
#include "session/data_dir.h"
#include "session/principal_scope.h"

namespace imgmcp::session {
namespace {

using std::chrono::days;
using std::chrono::milliseconds;
using std::chrono::system_clock;

system_clock::time_point DayStart(int64_t ms) {
  return std::chrono::floor<days>(system_clock::time_point(milliseconds(ms)));
}

bool FiniteNonNegative(double x) { return std::isfinite(x) && x >= 0; }

// Sums of dollar amounts in binary floating point are inexact (0.1 + 0.1 + 0.1 > 0.3): a sum
// crosses a budget only when it is over by more than a billionth of a dollar.
constexpr double kUsdSlack = 1e-9;

bool Crosses(double so_far, double more, double limit) {
  return limit > 0 && so_far + more > limit + kUsdSlack;
}

}  // namespace

std::string SessionChargedUsdSql(std::string_view table, std::string_view session_id) {
  return "(SELECT coalesce(sum(usd), 0) FROM " + std::string(table) +
         " WHERE session_id = " + std::string(session_id) + " AND state = 'charged')";
}

std::string UtcDay(int64_t ms) {
  const std::chrono::year_month_day ymd{std::chrono::floor<days>(DayStart(ms))};
  char out[16];
  std::snprintf(out, sizeof out, "%04d-%02u-%02u", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
  return out;
}

std::string NextUtcMidnight(int64_t ms) { return FormatRfc3339(DayStart(ms) + days(1)); }

Status ValidateSpendHold(const SpendHold& hold) {
  if (!IsValidStoredSessionId(hold.session_id)) {
    return InvalidArgument("spend hold: invalid session id \"" + hold.session_id + "\"");
  }
  if (!FiniteNonNegative(hold.estimate_usd)) {
    return InvalidArgument("spend hold: the estimate must be a finite amount of at least 0");
  }
  if (hold.model.empty()) return InvalidArgument("spend hold: no model");
  return Status::Ok();
}

Status ValidateSpendCharge(const SpendCharge& charge) {
  const SpendTokens& t = charge.tokens;
  if (!FiniteNonNegative(charge.usd)) {
    return InvalidArgument("spend charge: the cost must be a finite amount of at least 0");
  }
  if (t.input < 0 || t.output_image < 0 || t.output_text < 0 || t.thoughts < 0 ||
      t.grounding_queries < 0) {
    return InvalidArgument("spend charge: a token or query count is negative");
  }
  if (charge.priced_model.empty()) return InvalidArgument("spend charge: no priced model");
  return Status::Ok();
}

namespace {
constexpr std::string_view kRefusalPrefix = "budget reached: ";
constexpr std::string_view kDayFlag = "--budget-usd-per-day";
constexpr std::string_view kSessionFlag = "--budget-usd-per-session";
constexpr std::string_view kPrincipalDayFlag = "--budget-usd-per-user-day";
}  // namespace

std::string_view RefusedBudget(const Error& error) {
  if (error.code != ErrorCode::kResourceExhausted) return "";
  std::string_view m = error.message;
  if (!m.starts_with(kRefusalPrefix)) return "";
  m.remove_prefix(kRefusalPrefix.size());
  if (m.starts_with(kPrincipalDayFlag)) return "per_user_day";
  if (m.starts_with(kDayFlag)) return "per_day";
  if (m.starts_with(kSessionFlag)) return "per_session";
  return "";
}

Status CheckSpendBudgets(const SpendBudgets& budgets, const SpendTotals& totals,
                         const SpendHold& hold) {
  const auto refuse = [&](const std::string& budget, double limit, double so_far,
                          const std::string& scope, const std::string& resets) {
    return Error(ErrorCode::kResourceExhausted,
                 std::string(kRefusalPrefix) + budget + " is " + FormatUsd(limit) + "; " + scope +
                     " has spent or holds for calls in flight " + FormatUsd(so_far) +
                     " and this call may cost up to " + FormatUsd(hold.estimate_usd) +
                     ", which would cross it. Nothing was sent to the model. " + resets);
  };
  if (Crosses(totals.day_usd, hold.estimate_usd, budgets.per_day_usd)) {
    return refuse(std::string(kDayFlag), budgets.per_day_usd, totals.day_usd,
                  "today (" + UtcDay(hold.now_ms) + " UTC) every call",
                  "It resets at " + NextUtcMidnight(hold.now_ms) +
                      "; until then ask for a cheaper call (a smaller image_size, no search, "
                      "less thinking) or ask the operator to raise the budget.");
  }
  if (Crosses(totals.principal_day_usd, hold.estimate_usd, budgets.per_principal_day_usd)) {
    return refuse(std::string(kPrincipalDayFlag), budgets.per_principal_day_usd,
                  totals.principal_day_usd,
                  "today (" + UtcDay(hold.now_ms) + " UTC) every call of yours",
                  "It resets at " + NextUtcMidnight(hold.now_ms) +
                      "; until then ask for a cheaper call (a smaller image_size, no search, "
                      "less thinking) or ask the operator to raise the budget.");
  }
  if (Crosses(totals.session_usd, hold.estimate_usd, budgets.per_session_usd)) {
    return refuse(std::string(kSessionFlag), budgets.per_session_usd, totals.session_usd,
                  "session '" + std::string(SplitScopedSessionId(hold.session_id).session_id) + "'",
                  "It does not reset: continue in a new session, ask for a cheaper call, or ask "
                  "the operator to raise the budget.");
  }
  return Status::Ok();
}

}  // namespace imgmcp::session
