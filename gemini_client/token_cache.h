// TokenCache: the RequestAuth of Vertex AI's OAuth credentials. Keeps one access token from a
// TokenSource and hands it to every call until shortly before it expires; then exactly one
// caller fetches the next one while the others wait for it (single flight), however many there
// are. A 401 drops the token it was given for (only that one: 32 calls rejected with the same
// token cause one fetch), so the next call fetches afresh.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/thread_annotations.h"
#include "gemini_client/request_auth.h"
#include "gemini_client/token_source.h"

namespace imgmcp::gemini {

// A token is refreshed this long before it expires (Google's libraries use 3 min 45 s), or at
// half its life when that is shorter.
inline constexpr std::chrono::seconds kTokenRefreshMargin{225};
// How many of the latest access tokens are redacted from messages.
inline constexpr size_t kRememberedTokens = 4;

class TokenCache final : public RequestAuth {
 public:
  // `clock` (SystemClock when null) must outlive the cache.
  explicit TokenCache(std::unique_ptr<TokenSource> source, const Clock* clock = nullptr);

  std::string HeaderName() const override { return "Authorization"; }
  // "Bearer <token>": the cached token while it is fresh, else the next one (fetched by this
  // caller, or by the one already fetching it). A failed fetch fails every caller that waited
  // for it, without another request.
  Result<std::string> Credential(std::stop_token cancel,
                                 std::chrono::steady_clock::time_point deadline) override;
  bool Rejected(const std::string& credential) override;
  std::string Describe() const override { return source_->Describe(); }
  // The last kRememberedTokens access tokens (an answer to a call that used an older one may
  // arrive after a refresh) and the source's secrets.
  std::vector<std::string> SecretsToScrub() const override;

  // Token requests made so far (for tests and --self-check).
  uint64_t FetchCount() const;

 private:
  // Fetches the next token as the one caller doing so. mutex_ held; released while fetching and
  // while telling the waiters, held again on return.
  Result<std::string> FetchAsLeader(std::stop_token cancel,
                                    std::chrono::steady_clock::time_point deadline)
      REQUIRES(mutex_);

  const std::unique_ptr<TokenSource> source_;
  const SystemClock system_clock_;
  const Clock* const clock_;

  // guards token_, recent_tokens_, refresh_at_, fetching_, flight_, last_failure_, fetch_count_
  mutable Mutex mutex_;
  std::condition_variable_any fetched_;  // signalled when a fetch ends (well or not)
  std::optional<std::string> token_ GUARDED_BY(mutex_);  // the current token, if any
  // The last kRememberedTokens fetched, oldest first.
  std::deque<std::string> recent_tokens_ GUARDED_BY(mutex_);
  std::chrono::steady_clock::time_point refresh_at_ GUARDED_BY(mutex_);
  bool fetching_ GUARDED_BY(mutex_) = false;  // a caller is fetching now, without the lock
  // Fetches begun; the current one's number while fetching_.
  uint64_t flight_ GUARDED_BY(mutex_) = 0;
  // How fetch number flight_ failed, if it did.
  std::optional<Error> last_failure_ GUARDED_BY(mutex_);
  uint64_t fetch_count_ GUARDED_BY(mutex_) = 0;
};

}  // namespace imgmcp::gemini
