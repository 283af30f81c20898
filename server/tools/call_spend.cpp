#include "server/tools/call_spend.h"

#include <utility>

#include "common/log.h"
#include "common/usd.h"

namespace imgmcp::tools {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// When a hold taken at `now_ms` for a call with `deadline` stops counting: the call cannot run
// past its deadline; a minute more for the answer to be settled.
int64_t HoldExpiry(int64_t now_ms, std::chrono::seconds deadline) {
  return now_ms + std::chrono::duration_cast<std::chrono::milliseconds>(deadline).count() + 60'000;
}

session::SpendHold MakeHold(const std::string& session_id, const imaging::CallCost& estimate,
                            std::chrono::seconds deadline) {
  session::SpendHold hold;
  hold.session_id = session_id;
  hold.model = estimate.priced_model;
  hold.estimate_usd = estimate.usd;
  hold.now_ms = NowMs();
  hold.expires_ms = HoldExpiry(hold.now_ms, deadline);
  return hold;
}

}  // namespace

Status CheckCostCap(const imaging::CallCost& estimate, std::optional<double> max_cost_usd) {
  if (!max_cost_usd || estimate.usd <= *max_cost_usd) return Status::Ok();
  return Error(ErrorCode::kFailedPrecondition,
               "cost cap: this call may cost up to " + FormatUsd(estimate.usd) + " on " +
                   estimate.priced_model + " (" + imaging::CostLine(estimate) +
                   ", the worst case), above max_cost_usd " + FormatUsd(*max_cost_usd) +
                   ". Nothing was sent. Raise max_cost_usd, or ask for less: a smaller "
                   "image_size, fewer reference images, less thinking, no search; "
                   "estimate_only: true shows the estimate.");
}

CallSpend::CallSpend(CallSpend&& other) noexcept
    : store_(std::exchange(other.store_, nullptr)), id_(other.id_) {}

CallSpend& CallSpend::operator=(CallSpend&& other) noexcept {
  if (this != &other) {
    Release();
    store_ = std::exchange(other.store_, nullptr);
    id_ = other.id_;
  }
  return *this;
}

CallSpend::~CallSpend() { Release(); }

void CallSpend::Release() {
  if (store_ == nullptr) return;
  if (Status released = store_->ReleaseSpend(id_); !released.ok()) {
    log::Warn("tools",
              "releasing spend hold " + std::to_string(id_) +
                  " failed (it stops counting when it expires): " + released.error().message);
  }
  store_ = nullptr;
}

Result<CallSpend> CallSpend::Hold(session::SessionStore& store,
                                  const session::SpendBudgets& budgets,
                                  const std::string& session_id, const imaging::CallCost& estimate,
                                  std::chrono::seconds deadline) {
  const bool budgeted = budgets.per_day_usd > 0 || budgets.per_session_usd > 0;
  if (estimate.usd <= 0) return CallSpend();
  Result<int64_t> id = store.ReserveSpend(MakeHold(session_id, estimate, deadline), budgets);
  if (!id.ok() && id.error().code == ErrorCode::kUnsupported && !budgeted) return CallSpend();
  if (!id.ok()) return id.error();
  return CallSpend(&store, *id);
}

void CallSpend::Renew(std::chrono::seconds deadline) {
  if (store_ == nullptr) return;
  if (Status renewed = store_->RenewSpendHold(id_, HoldExpiry(NowMs(), deadline)); !renewed.ok()) {
    log::Warn("tools",
              "renewing spend hold " + std::to_string(id_) +
                  " failed (it counts until its first expiry): " + renewed.error().message);
  }
}

void CallSpend::Settle(const imaging::CallCost& cost) {
  if (store_ == nullptr) return;
  session::SpendCharge charge;
  charge.usd = cost.usd;
  charge.priced_model = cost.priced_model;
  charge.tokens = {.input = cost.input_tokens,
                   .output_image = cost.output_image_tokens,
                   .output_text = cost.output_text_tokens,
                   .thoughts = cost.thoughts_tokens,
                   .grounding_queries = cost.grounding_queries};
  if (Status settled = store_->SettleSpend(id_, charge); !settled.ok()) {
    log::Warn("tools", "recording the cost of a call (" + FormatUsd(cost.usd) +
                           ") failed: " + settled.error().message);
  }
  store_ = nullptr;
}

}  // namespace imgmcp::tools
