// The spend ledger (docs/generation.md, "What it costs"): what every paid backend call cost, and
// the reservations budgets are checked against, kept by each SessionStore beside its versions
// (table spend in both stores), so that every process and replica on one store sees one ledger.
//
// A paid call draws a hold of its worst-case estimate before any request (ReserveSpend, refused
// when it would cross a budget), then settles it with what the backend reported (SettleSpend),
// or releases it when no answer came (ReleaseSpend). Holds, charges and the budget check are
// decided in one serialised transaction, so concurrent calls against a budget with room for N of
// them run exactly N. A hold stops counting at its expiry (its process died mid-call).
//
// Every row names its principal ("" the local one; under OAuth each person's key), so the
// per-person daily budget is one more sum over the same rows.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace imgmcp::session {

// Tokens by kind, as the backend reported them for one call.
struct SpendTokens {
  int64_t input = 0;         // the prompt: text and images
  int64_t output_image = 0;  // the answer's image
  int64_t output_text = 0;   // the answer's text
  int64_t thoughts = 0;      // thinking
  int64_t grounding_queries = 0;
};

// What a call cost: in USD, with `priced_model`'s prices.
struct SpendCharge {
  double usd = 0;
  SpendTokens tokens;
  std::string priced_model;
};

// The budgets a hold is checked against, in USD; 0 = none.
struct SpendBudgets {
  double per_day_usd = 0;      // every call on the store in one UTC calendar day
  double per_session_usd = 0;  // every call of one session, ever
  // every call of one principal (SpendHold::principal) in one UTC calendar day
  double per_principal_day_usd = 0;
};

// A hold of a call's worst-case estimate.
struct SpendHold {
  std::string session_id;
  std::string principal;  // whose call (principal_scope.h): "" the local principal
  std::string model;
  double estimate_usd = 0;
  int64_t now_ms = 0;      // when the call draws it: its UTC day is the day it counts on
  int64_t expires_ms = 0;  // after this the hold no longer counts (its call cannot be running)
};

// The sums a budget is checked against, each with the live holds included.
struct SpendTotals {
  double day_usd = 0;              // charges and live holds on the hold's UTC day
  double session_usd = 0;          // charges and live holds of the hold's session
  double session_charged_usd = 0;  // the session's charges alone: what it has paid for
  double principal_day_usd = 0;    // charges and live holds of the hold's principal on its day
};

}  // namespace imgmcp::session
