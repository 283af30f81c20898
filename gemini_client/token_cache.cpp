#include "gemini_client/token_cache.h"

#include <algorithm>
#include <utility>

namespace imgmcp::gemini {

TokenCache::TokenCache(std::unique_ptr<TokenSource> source, const Clock* clock)
    : source_(std::move(source)), clock_(clock != nullptr ? clock : &system_clock_) {}

uint64_t TokenCache::FetchCount() const {
  MutexLock lock(mutex_);
  return fetch_count_;
}

Result<std::string> TokenCache::Credential(std::stop_token cancel,
                                           std::chrono::steady_clock::time_point deadline) {
  MutexLock lock(mutex_);
  while (true) {
    if (token_.has_value() && clock_->SteadyNow() < refresh_at_) return "Bearer " + *token_;
    if (!fetching_) return FetchAsLeader(cancel, deadline);
    // Someone is fetching: wait for that flight to land.
    const uint64_t awaited = flight_;
    const auto landed = [&] {
      mutex_.AssertHeld();
      return !fetching_ || flight_ != awaited;
    };
    const bool done = deadline == std::chrono::steady_clock::time_point::max()
                          ? fetched_.wait(lock, cancel, landed)
                          : fetched_.wait_until(lock, cancel, deadline, landed);
    if (!done) {
      return MakeError(
          cancel.stop_requested() ? ErrorCode::kCancelled : ErrorCode::kDeadlineExceeded,
          "gave up waiting for an access token (" + source_->Describe() + ")");
    }
    if (flight_ == awaited && last_failure_.has_value()) return *last_failure_;
  }
}

Result<std::string> TokenCache::FetchAsLeader(std::stop_token cancel,
                                              std::chrono::steady_clock::time_point deadline) {
  fetching_ = true;
  ++flight_;
  ++fetch_count_;
  last_failure_.reset();
  mutex_.unlock();  // the caller's MutexLock stays balanced: taken again below
  Result<AccessToken> fetched = source_->Fetch(cancel, deadline);
  mutex_.lock();
  fetching_ = false;
  Result<std::string> out = MakeError(ErrorCode::kInternal, "unreachable");
  if (fetched.ok()) {
    const auto now = clock_->SteadyNow();
    // Clamped again here, whatever the source: the sum below cannot overflow.
    const auto life = std::clamp(fetched->expires_in, kMinTokenLifetime, kMaxTokenLifetime);
    recent_tokens_.push_back(fetched->token);
    if (recent_tokens_.size() > kRememberedTokens) recent_tokens_.pop_front();
    token_ = std::move(fetched->token);
    refresh_at_ = now + std::max(life - kTokenRefreshMargin, life / 2);
    out = "Bearer " + *token_;
  } else {
    last_failure_ = fetched.error();
    out = fetched.error();
  }
  mutex_.unlock();
  fetched_.notify_all();
  mutex_.lock();
  return out;
}

std::vector<std::string> TokenCache::SecretsToScrub() const {
  std::vector<std::string> secrets = source_->Secrets();
  MutexLock lock(mutex_);
  secrets.insert(secrets.end(), recent_tokens_.begin(), recent_tokens_.end());
  return secrets;
}

bool TokenCache::Rejected(const std::string& credential) {
  MutexLock lock(mutex_);
  if (token_.has_value() && credential == "Bearer " + *token_) token_.reset();
  return true;
}

}  // namespace imgmcp::gemini
