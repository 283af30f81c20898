// Integrity of MRTR requestState (basic/patterns/mrtr): the state a handler puts in an
// input_required result goes to the client sealed — bound to the request it answers (method and
// name), stamped with an expiry and MACed with a server key — and a retry's state is opened
// (verified) before the handler sees it. Handlers only ever see their own plain state; an
// altered, expired or transplanted state is refused (-32602) without reaching them. The sealing
// itself is common/text_seal.h.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"
#include "common/text_seal.h"

namespace imgmcp::mcp {

class RequestStateSeal {
 public:
  static constexpr std::chrono::seconds kDefaultTtl{600};

  // `key`: the MAC key (servers behind one load balancer share it); empty → a random key for
  // this process. `clock` must outlive the seal.
  explicit RequestStateSeal(std::string key, std::chrono::seconds ttl = kDefaultTtl,
                            const Clock* clock = nullptr);

  // `request` names what the state belongs to, e.g. "tools/call test_tool".
  std::string Seal(std::string_view request, std::string_view state) const;
  // The plain state, or kInvalidArgument saying why it was refused.
  Result<std::string> Open(std::string_view request, std::string_view sealed) const;

 private:
  const TextSeal seal_;
  const std::chrono::seconds ttl_;
};

}  // namespace imgmcp::mcp
