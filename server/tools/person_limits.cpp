#include "server/tools/person_limits.h"

#include <chrono>
#include <memory>
#include <utility>

#include "common/log.h"

namespace imgmcp::tools {
namespace {

constexpr int64_t kWindowMs = 60'000;

}  // namespace

PersonLimits::PersonLimits(session::SessionStore& store, const Clock& clock,
                           PersonLimitsOptions options)
    : store_(store), clock_(clock), options_(options) {}

std::optional<mcp::CallRefusal> PersonLimits::CountInWindow(const std::string& principal) {
  const int64_t now_ms = WallMs(clock_);
  const int64_t window_ms = now_ms - now_ms % kWindowMs;
  Result<int64_t> calls = store_.CountCall(principal, window_ms, window_ms - kWindowMs);
  if (!calls.ok()) {
    // The limit cannot be told: the call goes ahead (its own store calls will fail if the store
    // is down) rather than everyone being refused.
    log::Warn("tools", "the per-person call count could not be kept: " + calls.error().message);
    return std::nullopt;
  }
  if (*calls <= options_.calls_per_minute) return std::nullopt;
  const int retry = static_cast<int>((window_ms + kWindowMs - now_ms + 999) / 1000);
  return mcp::CallRefusal{
      .limit = "--rate-limit-per-user",
      .message = "Too many requests: you have started " +
                 std::to_string(options_.calls_per_minute) +
                 " tool calls this minute, the most this server allows one person "
                 "(--rate-limit-per-user " +
                 std::to_string(options_.calls_per_minute) +
                 "/min). Nothing was done; try again in " + std::to_string(retry) + " s.",
      .retry_after_seconds = retry};
}

PersonLimits::InFlight::~InFlight() { limits->Leave(principal); }

void PersonLimits::Leave(const std::string& principal) {
  MutexLock lock(mu_);
  auto it = in_flight_.find(principal);
  if (it != in_flight_.end() && --it->second <= 0) in_flight_.erase(it);
}

mcp::CallPermit PersonLimits::Admit(const mcp::Caller& caller, const std::string& /*tool*/) {
  mcp::CallPermit permit;
  const std::string& principal = caller.principal;
  if (options_.max_in_flight > 0) {
    MutexLock lock(mu_);
    int64_t& mine = in_flight_[principal];
    if (mine >= options_.max_in_flight) {
      if (mine == 0) in_flight_.erase(principal);
      permit.refusal = mcp::CallRefusal{
          .limit = "--max-calls-per-user",
          .message = "Too many requests: you have " + std::to_string(mine) +
                     " tool calls in flight, the most this server runs at once for one person "
                     "(--max-calls-per-user " +
                     std::to_string(options_.max_in_flight) +
                     "). Nothing was done; wait for one to finish and try again.",
          .retry_after_seconds = 1};
      return permit;
    }
    ++mine;
    permit.held = std::make_shared<InFlight>(this, principal);
  }
  if (options_.calls_per_minute > 0) {
    if (auto refused = CountInWindow(principal)) {
      permit.held.reset();  // leaves the calls in flight again
      permit.refusal = std::move(refused);
    }
  }
  return permit;
}

}  // namespace imgmcp::tools
