#include "mcp/request_state.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "common/base64.h"
#include "common/decimal.h"
#include "common/random.h"
#include "common/sha256.h"

namespace imgmcp::mcp {

namespace {

// Sealed form: "<expiry, unix seconds>.<base64 of the state>.<hex HMAC-SHA-256 of
// request \n expiry.base64>". Neither digits, base64 nor hex contain '.'.
constexpr char kSeparator = '.';

const Clock& DefaultClock() {
  static const SystemClock clock;
  return clock;
}

int64_t UnixSeconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

Error Refused(const std::string& why) {
  return Error(ErrorCode::kInvalidArgument, "requestState " + why);
}

}  // namespace

RequestStateSeal::RequestStateSeal(std::string key, std::chrono::seconds ttl, const Clock* clock)
    : key_(key.empty() ? RandomHex(32) : std::move(key)),
      ttl_(ttl),
      clock_(clock != nullptr ? *clock : DefaultClock()) {}

std::string RequestStateSeal::Mac(std::string_view request, std::string_view body) const {
  std::string message(request);
  message.push_back('\n');
  message.append(body);
  return HmacSha256Hex(key_, message);
}

std::string RequestStateSeal::Seal(std::string_view request, std::string_view state) const {
  std::string body = std::to_string(UnixSeconds(clock_.WallNow() + ttl_));
  body.push_back(kSeparator);
  body += Base64Encode(state);
  const std::string mac = Mac(request, body);
  return body + kSeparator + mac;
}

Result<std::string> RequestStateSeal::Open(std::string_view request,
                                           std::string_view sealed) const {
  const size_t first = sealed.find(kSeparator);
  const size_t last = sealed.rfind(kSeparator);
  if (first == std::string_view::npos || first == last) {
    return Refused("is not one this server issued");
  }
  const std::string_view body = sealed.substr(0, last);
  const std::string expected = Mac(request, body);
  const std::string_view mac = sealed.substr(last + 1);
  // Constant-time comparison: the MAC is a secret until it is right.
  unsigned char diff = mac.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < mac.size() && i < expected.size(); ++i) {
    diff |= static_cast<unsigned char>(mac[i] ^ expected[i]);
  }
  if (diff != 0) {
    return Refused("failed verification (altered, or issued for another request)");
  }
  const std::optional<int64_t> expiry = ParseDecimal<int64_t>(body.substr(0, first));
  if (!expiry) return Refused("is not one this server issued");
  if (UnixSeconds(clock_.WallNow()) > *expiry) {
    return Refused("has expired; call again without it");
  }
  auto state = Base64Decode(body.substr(first + 1));
  if (!state.ok()) return Refused("is not one this server issued");
  return std::move(state).value();
}

}  // namespace imgmcp::mcp
