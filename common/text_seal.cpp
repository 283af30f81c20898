#include "common/text_seal.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "common/base64.h"
#include "common/decimal.h"
#include "common/random.h"
#include "common/sha256.h"

namespace imgmcp {

namespace {

constexpr char kSeparator = '.';  // neither digits, base64 nor hex contain it

const Clock& SystemClockOnce() {
  static const SystemClock clock;
  return clock;
}

int64_t UnixSeconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

Error NoSeal() { return Error(ErrorCode::kInvalidArgument, "not a sealed value"); }

// Constant-time comparison: the MAC is a secret until it is right.
bool SameMac(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

}  // namespace

TextSeal::TextSeal(std::string key, const Clock* clock)
    : key_(key.empty() ? RandomHex(32) : std::move(key)),
      clock_(clock != nullptr ? *clock : SystemClockOnce()) {}

std::string TextSeal::Mac(std::string_view purpose, std::string_view body) const {
  std::string message(purpose);
  message.push_back('\n');
  message.append(body);
  return HmacSha256Hex(key_, message);
}

std::string TextSeal::Seal(std::string_view purpose, std::string_view text,
                           std::chrono::seconds ttl) const {
  std::string body = std::to_string(UnixSeconds(clock_.WallNow() + ttl));
  body.push_back(kSeparator);
  body += Base64Encode(text);
  const std::string mac = Mac(purpose, body);
  return body + kSeparator + mac;
}

Result<std::string> TextSeal::Open(std::string_view purpose, std::string_view sealed) const {
  const size_t first = sealed.find(kSeparator);
  const size_t last = sealed.rfind(kSeparator);
  if (first == std::string_view::npos || first == last) return NoSeal();
  const std::string_view body = sealed.substr(0, last);
  if (!SameMac(sealed.substr(last + 1), Mac(purpose, body))) {
    return Error(ErrorCode::kPermissionDenied,
                 "failed verification (altered, or not made by this server for this use)");
  }
  const std::optional<int64_t> expiry = ParseDecimal<int64_t>(body.substr(0, first));
  if (!expiry) return NoSeal();
  if (UnixSeconds(clock_.WallNow()) > *expiry) {
    return Error(ErrorCode::kDeadlineExceeded, "has expired");
  }
  auto text = Base64Decode(body.substr(first + 1));
  if (!text.ok()) return NoSeal();
  return std::move(text).value();
}

}  // namespace imgmcp
