// The authorization servers' signing keys as JWK Sets (RFC 7517), and the check of a JWS
// signature against one of them (RFC 7515, with the algorithms of RFC 7518 and RFC 8037).
// OpenSSL stays behind this header: a key is an opaque VerifyingKey.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/result.h"

namespace imgmcp::oauth {

// A public key ready for signature checks (defined in server/oauth/jwk.cpp; it owns an OpenSSL
// key). Immutable once built, so one key may be used by many threads at once.
class VerifyingKey;

// One usable key of a JWK Set.
struct Jwk {
  std::string kid;  // "" when absent
  std::string kty;  // "RSA", "EC" (P-256) or "OKP" (Ed25519)
  std::string alg;  // the key's "alg", "" when absent
  std::shared_ptr<const VerifyingKey> key;
};

// The usable signature-verification keys of a JWK Set document ({"keys": [...]}), in its order.
// A key this server cannot use is skipped, not an error: "use" present and not "sig", "key_ops"
// present without "verify", "kid" or "alg" not a string, an "alg" that is not accepted
// (IsAcceptedAlgorithm) or does not fit the key type, "oct" (symmetric) keys, other key types, EC
// curves other than P-256, OKP curves other than Ed25519, RSA moduli under 2048 bits (or over
// OpenSSL's 16384), RSA exponents that are even, 1 or over 64 bits, and any malformed member (bad
// base64url, an EC coordinate of the wrong length, a point not on the curve). Private members ("d",
// "p", ...) are ignored: only the public part is used. Fails (kInvalidArgument) only when the
// document is not an object with a "keys" array.
Result<std::vector<Jwk>> ParseJwks(const Json& document);

// The signature algorithms accepted: exactly "RS256", "ES256" and "EdDSA".
bool IsAcceptedAlgorithm(std::string_view alg);

// Checks the JWS signature `signature` (raw bytes) of `signing_input` with `key`. `alg` must be
// accepted (so "none", "HS256" and everything else are refused), the key's type must match it
// (RS256: RSA, ES256: EC P-256, EdDSA: OKP Ed25519), and a key that names an "alg" must name this
// one; those refusals are kInvalidArgument. ES256 signatures take the JWS form, R || S in exactly
// 64 bytes. A signature that does not verify is kPermissionDenied. Messages say which check
// failed and never quote key or token material.
Status VerifyJwsSignature(std::string_view alg, const Jwk& key, std::string_view signing_input,
                          std::string_view signature);

}  // namespace imgmcp::oauth
