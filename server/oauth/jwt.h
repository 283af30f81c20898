// JWT access tokens as the resource server receives them (docs/security.md): a compact JWS split
// into its header, claims and signature, checked for shape only. Whether the signature is good is
// VerifyJwsSignature's question (server/oauth/jwk.h); what the claims must say is the caller's.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/json.h"
#include "common/result.h"

namespace imgmcp::oauth {

// The longest token ParseJwt reads. Real access tokens are a few hundred bytes to a few KiB; the
// limit keeps a hostile Authorization header from costing more than that to refuse.
inline constexpr size_t kMaxTokenBytes = 16 * 1024;

// A parsed compact JWS (RFC 7515 §7.1), not yet verified.
struct Jwt {
  Json header;                // the decoded JOSE header (a JSON object)
  Json claims;                // the decoded payload (a JSON object)
  std::string signing_input;  // "<base64url header>.<base64url payload>" as received
  std::string signature;      // the raw signature bytes
  std::string alg;            // header "alg" (a string; required)
  std::string kid;            // header "kid", "" when absent
  std::string typ;            // header "typ", "" when absent
};

// Parses a compact JWS: three base64url parts without padding, each of which decodes; the header
// and the payload are JSON objects; "alg" is a string; "kid" and "typ", when present, are strings;
// the signature is not empty. A header naming "crit" extensions is refused (none is understood),
// and so is a JWE (five parts). Tokens longer than kMaxTokenBytes are refused unread. Errors are
// kInvalidArgument and say what is malformed, never quoting the token or any part of it.
Result<Jwt> ParseJwt(std::string_view compact);

// base64url (RFC 4648 §5) without padding, strictly: '=', '+', '/', whitespace and any other
// character outside the URL-safe alphabet are refused, and so are a length of 4n+1 and unused
// trailing bits that are not zero (so each byte string has exactly one accepted encoding). An
// error's message is a phrase ("not unpadded base64url: ...") for the caller to put after the
// name of what it decoded: "the key's \"n\" is " + message.
Result<std::string> Base64UrlDecode(std::string_view text);

}  // namespace imgmcp::oauth
