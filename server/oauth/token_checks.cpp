#include "server/oauth/token_checks.h"

#include <string_view>

#include "common/ascii.h"
#include "common/sha256.h"
#include "server/oauth/jwk.h"

namespace imgmcp::oauth {

namespace {

Error Invalid(std::string message) {
  return Error(ErrorCode::kPermissionDenied, std::move(message));
}

// A NumericDate claim (RFC 7519 §2: seconds since the epoch, possibly fractional).
std::optional<std::chrono::system_clock::time_point> TimeClaim(const Json& claims,
                                                               const char* name) {
  const auto it = claims.find(name);
  if (it == claims.end() || !it->is_number()) return std::nullopt;
  const double seconds = it->get<double>();
  if (!(seconds > -1e12 && seconds < 1e12)) return std::nullopt;
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::duration<double>(seconds)));
}

bool AudienceHolds(const Json& claims, const std::string& resource) {
  const auto aud = claims.find("aud");
  if (aud == claims.end()) return false;
  if (aud->is_string()) return *aud == resource;
  if (!aud->is_array()) return false;
  for (const Json& entry : *aud) {
    if (entry.is_string() && entry == resource) return true;
  }
  return false;
}

std::vector<std::string> ScopesOf(const Json& claims) {
  std::vector<std::string> scopes;
  if (const auto scope = claims.find("scope"); scope != claims.end() && scope->is_string()) {
    const std::string& text = scope->get_ref<const std::string&>();
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find(' ', start);
      if (end == std::string::npos) end = text.size();
      if (end > start) scopes.push_back(text.substr(start, end - start));
      start = end + 1;
    }
  } else if (const auto scp = claims.find("scp"); scp != claims.end() && scp->is_array()) {
    for (const Json& entry : *scp) {
      if (entry.is_string()) scopes.push_back(entry.get<std::string>());
    }
  }
  return scopes;
}

std::string StringClaim(const Json& claims, const char* name) {
  const auto it = claims.find(name);
  return it != claims.end() && it->is_string() ? it->get<std::string>() : "";
}

Status CheckLifetime(const Json& claims, const ExpectedClaims& expected) {
  const auto expires = TimeClaim(claims, "exp");
  if (!expires) return Invalid("the token has no valid exp (expiry) claim");
  if (*expires + expected.leeway <= expected.now) return Invalid("the token has expired");
  if (claims.contains("nbf")) {
    const auto not_before = TimeClaim(claims, "nbf");
    if (!not_before) return Invalid("the token's nbf claim is not a number");
    if (*not_before - expected.leeway > expected.now) {
      return Invalid("the token is not valid yet (nbf)");
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckTokenHeader(const Jwt& token) {
  const std::string typ = AsciiLower(token.typ);
  if (typ != "at+jwt" && typ != "application/at+jwt" && typ != "jwt") {
    return Invalid(token.typ.empty() ? "the token's header has no typ (at+jwt is expected)"
                                     : "the token's typ is not at+jwt or JWT");
  }
  if (!IsAcceptedAlgorithm(token.alg)) {
    return Invalid("the token's alg is not one of RS256, ES256, EdDSA");
  }
  return Status::Ok();
}

Result<Principal> CheckTokenClaims(const Jwt& token, const ExpectedClaims& expected) {
  return CheckClaimSet(token.claims, expected);
}

Result<Principal> CheckClaimSet(const Json& claims, const ExpectedClaims& expected) {
  if (StringClaim(claims, "iss") != expected.issuer) {
    return Invalid("the token's iss is not the issuer whose key signed it");
  }
  if (!AudienceHolds(claims, expected.resource)) {
    return Invalid("the token's aud does not hold this resource, " + expected.resource);
  }
  RETURN_IF_ERROR(CheckLifetime(claims, expected));
  Principal principal;
  principal.expires = *TimeClaim(claims, "exp");  // CheckLifetime found it
  principal.issuer = expected.issuer;
  principal.subject = StringClaim(claims, "sub");
  if (principal.subject.empty()) return Invalid("the token has no sub (subject) claim");
  principal.client_id = StringClaim(claims, "client_id");
  if (principal.client_id.empty()) principal.client_id = StringClaim(claims, "azp");
  principal.scopes = ScopesOf(claims);
  principal.key =
      Sha256Hex("imgmcp principal\n" + Json::array({principal.issuer, principal.subject}).dump());
  return principal;
}

}  // namespace imgmcp::oauth
