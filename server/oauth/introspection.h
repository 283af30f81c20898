// TokenIntrospection: opaque access tokens, asked about at the authorization server's RFC 7662
// introspection endpoint (OAuthOptions::introspection_url) with imgmcp's own client credentials.
// An answer is reused for OAuthOptions::introspection_cache (60 s) and never past the token's
// expiry, so a revoked token is refused within a minute; the cache is keyed by the token's
// SHA-256, never the token. Thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/clock.h"
#include "common/json.h"
#include "common/result.h"
#include "common/thread_annotations.h"
#include "server/oauth/oauth_options.h"
#include "server/oauth/principal.h"

namespace imgmcp::oauth {

// Answers kept at most (tokens seen within a minute); beyond, the expired ones are dropped, and
// all of them if none has expired.
inline constexpr size_t kMaxCachedIntrospections = 10'000;

class TokenIntrospection {
 public:
  // `options` (its url, credentials, post_form, issuers, leeway) and `clock` must outlive this.
  TokenIntrospection(const OAuthOptions& options, const Clock& clock);

  // The principal of `token` when the endpoint says it is active and its answer passes the claim
  // checks of token_checks.h for `resource` (aud, exp, sub; iss, when named, a trusted issuer).
  // kPermissionDenied when not; kUnavailable when the endpoint could not be asked (not cached).
  Result<Principal> Introspect(std::string_view token, const std::string& resource) EXCLUDES(mu_);

 private:
  struct Answer {
    Result<Principal> principal;
    std::chrono::steady_clock::time_point expires;
  };
  Result<Json> Ask(std::string_view token) const;
  Answer Judge(const Json& answer, const std::string& resource) const;
  void Keep(std::string key, Answer answer) REQUIRES(mu_);

  const OAuthOptions& options_;
  const Clock& clock_;
  const std::string authorization_;  // "Basic …" of the client credentials

  Mutex mu_;  // guards cache_
  std::unordered_map<std::string, Answer> cache_ GUARDED_BY(mu_);  // by the token's SHA-256
};

}  // namespace imgmcp::oauth
