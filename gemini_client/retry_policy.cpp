#include "gemini_client/retry_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace imgmcp::gemini {

bool IsRetryableHttpStatus(int http_status) {
  switch (http_status) {
    case 408:
    case 429:
    case 500:
    case 502:
    case 503:
    case 504:
      return true;
    default:
      return false;
  }
}

std::optional<std::chrono::milliseconds> ParseProtoDuration(std::string_view text) {
  if (text.size() < 2 || text.back() != 's') return std::nullopt;
  text.remove_suffix(1);
  int64_t whole = 0;
  size_t i = 0;
  size_t int_digits = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++int_digits) {
    if (whole > 315'576'000'000) return std::nullopt;  // protobuf Duration's own bound
    whole = whole * 10 + (text[i] - '0');
  }
  int64_t nanos = 0;
  size_t frac_digits = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++frac_digits) {
      if (frac_digits >= 9) return std::nullopt;
      nanos = nanos * 10 + (text[i] - '0');
    }
    if (frac_digits == 0) return std::nullopt;
    for (size_t k = frac_digits; k < 9; ++k) nanos *= 10;
  }
  if (i != text.size() || int_digits == 0) return std::nullopt;
  const int64_t ms = whole * 1000 + (nanos + 999'999) / 1'000'000;  // round up: never wait less
  return std::chrono::milliseconds(ms);
}

std::chrono::milliseconds BackoffDelay(int retry_index, const RetryPolicyOptions& options,
                                       double unit_random) {
  const double base = static_cast<double>(options.base_delay.count());
  const double cap = static_cast<double>(options.max_delay.count());
  const double exp = std::ldexp(base, std::clamp(retry_index, 0, 62));
  const double delay = std::min(cap, exp);
  const double jitter = std::clamp(unit_random, 0.0, 1.0) * options.jitter_fraction * delay;
  return std::chrono::milliseconds(static_cast<int64_t>(delay + jitter));
}

RetryDecision DecideRetry(const AttemptFailure& failure, int attempts_made, bool retry_once_used,
                          const RetryPolicyOptions& options, double unit_random) {
  RetryDecision decision;
  switch (failure.kind) {
    case FailureKind::kNone:
    case FailureKind::kTerminal:
      return decision;
    case FailureKind::kRetryOnce:
      if (retry_once_used) {
        decision.why_not = "it already failed this way twice";
        return decision;
      }
      break;
    case FailureKind::kTransient:
      break;
  }
  if (failure.http_status == 429 && failure.daily_quota) {
    decision.why_not = "the daily quota is used up, so retrying today will not help";
    return decision;
  }
  if (failure.retry_delay && *failure.retry_delay > options.max_server_delay) {
    decision.why_not = "Gemini asked to wait " + FormatDelay(*failure.retry_delay) +
                       ", longer than imgmcp waits (" + FormatDelay(options.max_server_delay) +
                       "); try again later";
    return decision;
  }
  if (attempts_made >= options.max_attempts) {
    decision.why_not = "gave up after " + std::to_string(attempts_made) + " attempts";
    return decision;
  }
  decision.retry = true;
  decision.delay = BackoffDelay(attempts_made - 1, options, unit_random);
  if (failure.retry_delay) decision.delay = std::max(decision.delay, *failure.retry_delay);
  return decision;
}

std::string FormatDelay(std::chrono::milliseconds delay) {
  const int64_t ms = delay.count();
  char buf[64];
  if (ms < 1000) {
    std::snprintf(buf, sizeof buf, "%lld ms", static_cast<long long>(ms));
  } else if (ms % 1000 == 0 || ms >= 10'000) {
    std::snprintf(buf, sizeof buf, "%lld s", static_cast<long long>((ms + 999) / 1000));
  } else {
    const long long tenths = (ms + 99) / 100;  // rounded up: never understate a wait
    std::snprintf(buf, sizeof buf, "%lld.%lld s", tenths / 10, tenths % 10);
  }
  return buf;
}

}  // namespace imgmcp::gemini
