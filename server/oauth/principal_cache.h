// PrincipalCache: what was decided about recently seen access tokens, so a client that sends the
// same token on every request costs one hash and one lookup instead of a signature check or an
// introspection (bench P6 with OAuth). Keyed by the token's SHA-256, never the token; an entry
// lasts until its own expiry (the token's, or a minute for an introspection's answer). Bounded:
// when full, expired entries go, and all of them if none has expired. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/result.h"
#include "common/thread_annotations.h"
#include "server/oauth/principal.h"

namespace imgmcp::oauth {

class PrincipalCache {
 public:
  static constexpr size_t kMaxEntries = 10'000;

  // The decision kept for `token` when it has not expired by `now`.
  std::optional<Result<Principal>> Find(std::string_view token,
                                        std::chrono::steady_clock::time_point now) EXCLUDES(mu_);
  // Keeps `decision` for `token` until `expires`.
  void Keep(std::string_view token, Result<Principal> decision,
            std::chrono::steady_clock::time_point expires,
            std::chrono::steady_clock::time_point now) EXCLUDES(mu_);

 private:
  struct Entry {
    Result<Principal> decision;
    std::chrono::steady_clock::time_point expires;
  };
  Mutex mu_;                                                        // guards entries_
  std::unordered_map<std::string, Entry> entries_ GUARDED_BY(mu_);  // by the token's SHA-256
};

}  // namespace imgmcp::oauth
