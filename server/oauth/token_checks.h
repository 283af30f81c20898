// The checks of a JWT access token (RFC 9068) besides its signature: the header's type and
// algorithm, and the claims — audience, lifetime, subject, scopes. Pure functions of the token and
// the time, unit-tested directly; resource_server.h verifies the signature with the issuer's key.
// Error messages say which check failed and never repeat the token.
#pragma once

#include <chrono>
#include <string>

#include "common/result.h"
#include "server/oauth/jwt.h"
#include "server/oauth/principal.h"

namespace imgmcp::oauth {

// `typ` "at+jwt" (RFC 9068), "application/at+jwt" or "JWT" (case-insensitive; required), and an
// accepted signature algorithm (jwk.h: RS256, ES256, EdDSA — never "none" or an HMAC).
Status CheckTokenHeader(const Jwt& token);

struct ExpectedClaims {
  std::string issuer;    // `iss` must be exactly this
  std::string resource;  // `aud` (a string or an array) must hold exactly this (RFC 8707)
  std::chrono::system_clock::time_point now;
  std::chrono::seconds leeway{60};  // how far `exp` and `nbf` may be off
};

// `iss` exact; `aud` holds the resource (a trailing slash makes another resource); `exp` required
// and after now − leeway; `nbf`, when present, before now + leeway; `sub` a non-empty string.
// The principal: issuer, subject, client (`client_id`, else `azp`) and scopes (`scope`, a
// space-separated string, or `scp`, an array of strings).
Result<Principal> CheckTokenClaims(const Jwt& token, const ExpectedClaims& expected);
// The same checks of a claim set from elsewhere (an introspection's answer, RFC 7662 §2.2).
Result<Principal> CheckClaimSet(const Json& claims, const ExpectedClaims& expected);

}  // namespace imgmcp::oauth
