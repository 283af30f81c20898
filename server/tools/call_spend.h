// The money side of a generate_image or edit_image call (README.md, "What it costs"): its
// worst-case estimate checked against max_cost_usd, a hold of it in the store's spend ledger
// (checked against the budgets) from before the request until the backend answers, and the
// charge of what the backend reported.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/json.h"
#include "common/result.h"
#include "imaging/call_cost.h"
#include "session/session_store.h"

namespace imgmcp::tools {

// kFailedPrecondition naming the estimate and the cap when `estimate` is above `max_cost_usd`.
Status CheckCostCap(const imaging::CallCost& estimate, std::optional<double> max_cost_usd);

// One call's place in the spend ledger. Not thread-safe: one call owns it.
class CallSpend {
 public:
  CallSpend() = default;  // holds nothing: a call that costs nothing
  CallSpend(CallSpend&& other) noexcept;
  CallSpend& operator=(CallSpend&& other) noexcept;
  CallSpend(const CallSpend&) = delete;
  ~CallSpend();  // a hold never settled is released: the call was not paid for

  // Holds `estimate` for the call on `session_id` until `deadline` from now, or refuses it
  // (kResourceExhausted naming the budget) when it would cross one of `budgets`. A call that
  // costs nothing holds nothing; so does every call on a store that keeps no ledger, unless
  // budgets are set (then that is an error: a budget the store cannot keep is no budget).
  static Result<CallSpend> Hold(session::SessionStore& store, const session::SpendBudgets& budgets,
                                const std::string& session_id, const imaging::CallCost& estimate,
                                std::chrono::seconds deadline);

  // The call got its session's turn and its backend call starts now: the hold counts until
  // `deadline` from now (however long the call waited in line). A failure is logged.
  void Renew(std::chrono::seconds deadline);

  // Charges `cost` (what the backend reported) in place of the hold. A ledger write that fails is
  // logged; the call's result stands.
  void Settle(const imaging::CallCost& cost);

 private:
  CallSpend(session::SessionStore* store, int64_t id) : store_(store), id_(id) {}
  void Release();

  session::SessionStore* store_ = nullptr;  // nullptr: nothing held
  int64_t id_ = 0;
};

}  // namespace imgmcp::tools
