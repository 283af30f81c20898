// PersonLimits: the per-person limits on tool calls (README.md, "Serve a team"), the server's
// mcp::CallLimiter. A person is a principal (mcp::Caller::principal): each OAuth principal, or
// the one local principal of stdio and --auth-token.
//
//   --max-calls-per-user N       calls of one person in flight in this process at once
//   --rate-limit-per-user N/min  calls of one person started in one minute (a fixed window on
//                                the wall clock), counted in the store (SessionStore::CountCall),
//                                so every process and replica on one store counts together
//
// A refusal names its flag and says when to try again (the next window; for calls in flight, a
// second). The per-person daily spend budget is the spend ledger's (--budget-usd-per-user-day,
// session/spend_rules.h): decided when a paid call holds its estimate, not here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "common/clock.h"
#include "common/thread_annotations.h"
#include "mcp/call_limiter.h"
#include "session/session_store.h"

namespace imgmcp::tools {

struct PersonLimitsOptions {
  int max_in_flight = 0;     // --max-calls-per-user (0 = none)
  int calls_per_minute = 0;  // --rate-limit-per-user (0 = none)
};

class PersonLimits final : public mcp::CallLimiter {
 public:
  // `store` and `clock` must outlive this object.
  PersonLimits(session::SessionStore& store, const Clock& clock, PersonLimitsOptions options);

  mcp::CallPermit Admit(const mcp::Caller& caller, const std::string& tool) override;

 private:
  // A call in flight: leaves the count when the core drops the permit.
  struct InFlight {
    InFlight(PersonLimits* limits, std::string principal)
        : limits(limits), principal(std::move(principal)) {}
    ~InFlight();
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;
    PersonLimits* limits;
    std::string principal;
  };

  // Counts the call in its minute; the refusal when it is one too many.
  std::optional<mcp::CallRefusal> CountInWindow(const std::string& principal);
  void Leave(const std::string& principal);

  session::SessionStore& store_;
  const Clock& clock_;
  const PersonLimitsOptions options_;
  Mutex mu_;                                                               // guards in_flight_
  std::map<std::string, int64_t, std::less<>> in_flight_ GUARDED_BY(mu_);  // by principal
};

}  // namespace imgmcp::tools
