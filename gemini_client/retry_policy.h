// Retry policy for Gemini calls: which failures are retried, how long to wait, when to give up.
// Pure functions only (no clock, no I/O) so every rule is unit-testable.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace imgmcp::gemini {

// How a failed attempt may be retried. Filled in by the wire-format parser or the HTTP layer.
enum class FailureKind {
  kNone,       // the attempt succeeded
  kTransient,  // 408/429/500/502/503/504 or a transport error: capped exponential backoff
  kRetryOnce,  // NO_IMAGE, IMAGE_OTHER, OTHER, MALFORMED_RESPONSE, unreadable 200 body: one retry
  kTerminal,   // never retried (400/402/403/404, refusals, text-only answers, …)
};

// What the retry policy needs to know about one failed attempt.
struct AttemptFailure {
  FailureKind kind = FailureKind::kTerminal;
  int http_status = 0;                                   // 0 for transport errors
  std::optional<std::chrono::milliseconds> retry_delay;  // google.rpc.RetryInfo.retryDelay
  bool daily_quota = false;                              // a QuotaFailure quotaId contains PerDay
};

struct RetryPolicyOptions {
  int max_attempts = 5;                                 // including the first
  std::chrono::milliseconds base_delay{1000};           // first backoff
  std::chrono::milliseconds max_delay{60'000};          // backoff cap (before jitter)
  std::chrono::milliseconds max_server_delay{300'000};  // a longer RetryInfo delay is terminal
  double jitter_fraction = 0.25;                        // jitter adds up to this share of the delay
};

struct RetryDecision {
  bool retry = false;
  std::chrono::milliseconds delay{0};  // how long to wait before the next attempt
  std::string why_not;                 // when !retry: a sentence for the error message, or ""
};

// True for the HTTP statuses Gemini documents as transient: 408 429 500 502 503 504.
bool IsRetryableHttpStatus(int http_status);

// Parses a protobuf Duration in JSON form ("47s", "1.203608125s", "0.5s"), rounding up to whole
// milliseconds. nullopt for anything else (negative, missing "s", garbage).
std::optional<std::chrono::milliseconds> ParseProtoDuration(std::string_view text);

// min(max_delay, base_delay * 2^retry_index) + jitter, with jitter = unit_random * jitter_fraction
// * that delay. `retry_index` is 0 for the wait before the second attempt; `unit_random` in [0,1).
std::chrono::milliseconds BackoffDelay(int retry_index, const RetryPolicyOptions& options,
                                       double unit_random);

// Decides whether to make another attempt after `attempts_made` attempts (≥ 1) ended with
// `failure`. `retry_once_used` says whether a kRetryOnce retry was already spent in this call.
// The deadline is not considered here; the caller checks that the delay fits.
RetryDecision DecideRetry(const AttemptFailure& failure, int attempts_made, bool retry_once_used,
                          const RetryPolicyOptions& options, double unit_random);

// "4 s", "1.2 s", "250 ms": how waits are shown in progress and error messages.
std::string FormatDelay(std::chrono::milliseconds delay);

}  // namespace imgmcp::gemini
