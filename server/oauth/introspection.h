// TokenIntrospection: opaque access tokens, asked about at the authorization server's RFC 7662
// introspection endpoint (OAuthOptions::introspection_url) with imgmcp's own client credentials.
// An answer is reused (principal_cache.h) for OAuthOptions::introspection_cache (60 s) and never
// past the token's expiry, so a revoked token is refused within a minute. Thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>

#include "common/clock.h"
#include "common/json.h"
#include "common/result.h"
#include "server/oauth/oauth_options.h"
#include "server/oauth/principal.h"
#include "server/oauth/principal_cache.h"

namespace imgmcp::oauth {

class TokenIntrospection {
 public:
  // `options` (its url, credentials, post_form, issuers, leeway) and `clock` must outlive this.
  TokenIntrospection(const OAuthOptions& options, const Clock& clock);

  // The principal of `token` when the endpoint says it is active and its answer passes the claim
  // checks of token_checks.h for `resource` (aud, exp, sub; iss, when named, a trusted issuer).
  // kPermissionDenied when not; kUnavailable when the endpoint could not be asked (not cached).
  Result<Principal> Introspect(std::string_view token, const std::string& resource);

 private:
  Result<Json> Ask(std::string_view token) const;
  // The decision on an answer, and until when it may be reused.
  std::pair<Result<Principal>, std::chrono::steady_clock::time_point> Judge(
      const Json& answer, const std::string& resource) const;

  const OAuthOptions& options_;
  const Clock& clock_;
  const std::string authorization_;  // "Basic …" of the client credentials
  PrincipalCache answers_;
};

}  // namespace imgmcp::oauth
