#include "server/oauth/introspection.h"

#include <algorithm>
#include <utility>

#include "common/ascii.h"
#include "common/base64.h"
#include "server/oauth/token_checks.h"

namespace imgmcp::oauth {

namespace {

Error Refused(std::string message) {
  return Error(ErrorCode::kPermissionDenied, std::move(message));
}

// RFC 6749 §2.3.1: each part form-encoded, then Basic.
std::string BasicCredentials(const std::string& id, const std::string& secret) {
  return "Basic " + Base64Encode(FormEncode(id) + ":" + FormEncode(secret));
}

// The answer's expiry (seconds since the epoch) as a steady-clock time, when it has one.
std::optional<std::chrono::steady_clock::time_point> SteadyExpiry(const Json& answer,
                                                                  const Clock& clock) {
  const auto exp = answer.find("exp");
  if (exp == answer.end() || !exp->is_number()) return std::nullopt;
  const auto wall = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::duration<double>(exp->get<double>())));
  return clock.SteadyNow() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(wall - clock.WallNow());
}

}  // namespace

TokenIntrospection::TokenIntrospection(const OAuthOptions& options, const Clock& clock)
    : options_(options),
      clock_(clock),
      authorization_(BasicCredentials(options.client_id, options.client_secret)) {}

Result<Principal> TokenIntrospection::Introspect(std::string_view token,
                                                 const std::string& resource) {
  if (auto cached = answers_.Find(token, clock_.SteadyNow())) return *std::move(cached);
  ASSIGN_OR_RETURN(const Json answer, Ask(token));
  auto [decision, until] = Judge(answer, resource);
  answers_.Keep(token, decision, until, clock_.SteadyNow());
  return decision;
}

Result<Json> TokenIntrospection::Ask(std::string_view token) const {
  const std::string form = "token=" + FormEncode(token) + "&token_type_hint=access_token";
  Result<FetchedDocument> answer =
      options_.post_form(options_.introspection_url, form, authorization_);
  if (!answer.ok()) {
    return Error(ErrorCode::kUnavailable,
                 "the introspection endpoint could not be asked: " + answer.error().message);
  }
  if (answer->status != 200) {
    return Error(ErrorCode::kUnavailable,
                 "the introspection endpoint answered HTTP " + std::to_string(answer->status));
  }
  Json parsed = Json::parse(answer->body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) {
    return Error(ErrorCode::kUnavailable, "the introspection endpoint's answer is not JSON");
  }
  return parsed;
}

std::pair<Result<Principal>, std::chrono::steady_clock::time_point> TokenIntrospection::Judge(
    const Json& answer, const std::string& resource) const {
  const auto max_until = clock_.SteadyNow() + options_.introspection_cache;
  const auto active = answer.find("active");
  if (active == answer.end() || !active->is_boolean() || !active->get<bool>()) {
    return {Refused("the token is not active (introspection)"), max_until};
  }
  ExpectedClaims expected;
  expected.issuer = options_.issuers.front();
  const auto iss = answer.find("iss");
  if (iss != answer.end() && iss->is_string()) expected.issuer = iss->get<std::string>();
  const bool trusted = std::find(options_.issuers.begin(), options_.issuers.end(),
                                 expected.issuer) != options_.issuers.end();
  if (!trusted) return {Refused("the token's iss is not a trusted issuer"), max_until};
  Json claims = answer;
  claims["iss"] = expected.issuer;
  expected.resource = resource;
  expected.now = clock_.WallNow();
  expected.leeway = options_.leeway;
  Result<Principal> principal = CheckClaimSet(claims, expected);
  const auto expiry = SteadyExpiry(answer, clock_);
  return {std::move(principal), expiry ? std::min(*expiry, max_until) : max_until};
}

}  // namespace imgmcp::oauth
