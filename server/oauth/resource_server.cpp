#include "server/oauth/resource_server.h"

#include "common/ascii.h"
#include "common/json.h"
#include "server/oauth/jwt.h"
#include "server/oauth/token_checks.h"

namespace imgmcp::oauth {

namespace {

// A quoted-string of a challenge (RFC 9110 §5.6.4) without quotes or backslashes to escape.
std::string Quote(std::string_view text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20) quoted += c;
  }
  return quoted + "\"";
}

// How long an accepted JWT is remembered at most.
constexpr std::chrono::minutes kMaxRemembered{5};

Error Unauthenticated(std::string message) {
  return Error(ErrorCode::kInvalidArgument, std::move(message));
}

// The issuer a token claims, read before anything is verified: it chooses the keys to verify with.
std::string ClaimedIssuer(const Jwt& token) {
  const auto iss = token.claims.find("iss");
  return iss != token.claims.end() && iss->is_string() ? iss->get<std::string>() : "";
}

}  // namespace

ResourceServer::ResourceServer(OAuthOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : system_clock_) {}

Result<std::unique_ptr<ResourceServer>> ResourceServer::Create(OAuthOptions options,
                                                               std::string default_resource) {
  if (options.issuers.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "OAuth needs at least one --oauth-issuer");
  }
  std::unique_ptr<ResourceServer> server(new ResourceServer(std::move(options)));
  if (server->options_.resource.empty()) {
    server->resource_ = std::move(default_resource);
  } else {
    server->resource_ = server->options_.resource;
  }
  ASSIGN_OR_RETURN(const OAuthUrl resource, ParseOAuthUrl(server->resource_, "--oauth-resource"));
  server->metadata_url_ = ProtectedResourceMetadataUrl(resource);
  for (const std::string& issuer : server->options_.issuers) {
    ASSIGN_OR_RETURN(OAuthUrl url, ParseOAuthUrl(issuer, "--oauth-issuer"));
    server->issuers_.emplace(
        issuer, std::make_unique<IssuerKeys>(issuer, std::move(url), server->options_.fetch,
                                             server->clock_, server->options_.refetch_interval));
  }
  if (!server->options_.introspection_url.empty()) {
    RETURN_IF_ERROR(ParseOAuthUrl(server->options_.introspection_url, "--oauth-introspection-url"));
    server->introspection_ = std::make_unique<TokenIntrospection>(server->options_, server->clock_);
  }
  return server;
}

std::string ResourceServer::MetadataJson() const {
  Json document = {{"resource", resource_},
                   {"authorization_servers", options_.issuers},
                   {"scopes_supported", {options_.read_scope, options_.write_scope}},
                   {"bearer_methods_supported", {"header"}},
                   {"resource_name", "imgmcp"}};
  return document.dump();
}

Result<std::string_view> BearerToken(std::string_view authorization_header) {
  const std::string_view value = TrimSpacesAndTabs(authorization_header);
  if (value.empty()) return Unauthenticated("a bearer token is required");
  constexpr std::string_view kScheme = "bearer ";
  if (value.size() <= kScheme.size() || AsciiLower(value.substr(0, kScheme.size())) != kScheme) {
    return Unauthenticated("the Authorization header must be 'Bearer <token>'");
  }
  return TrimSpacesAndTabs(value.substr(kScheme.size()));
}

Result<Principal> ResourceServer::Authenticate(std::string_view authorization_header) const {
  ASSIGN_OR_RETURN(const std::string_view compact, BearerToken(authorization_header));
  const auto now = clock_.SteadyNow();
  if (auto cached = verified_.Find(compact, now)) return *std::move(cached);  // JWTs only
  auto parsed = ParseJwt(compact);
  if (!parsed.ok() && introspection_) return introspection_->Introspect(compact, resource_);
  if (!parsed.ok()) {
    return Error(ErrorCode::kPermissionDenied,
                 "the token is not a JWT access token: " + parsed.error().message);
  }
  Result<Principal> principal = Verify(*parsed);
  if (principal.ok()) {
    const auto left = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        principal->expires - clock_.WallNow());
    verified_.Keep(compact, principal,
                   now + std::min<std::chrono::steady_clock::duration>(left, kMaxRemembered), now);
  }
  return principal;
}

Result<Principal> ResourceServer::Verify(const Jwt& token) const {
  RETURN_IF_ERROR(CheckTokenHeader(token));
  const auto issuer = issuers_.find(ClaimedIssuer(token));
  if (issuer == issuers_.end()) {
    return Error(ErrorCode::kPermissionDenied, "the token's iss is not a trusted issuer");
  }
  ASSIGN_OR_RETURN(const Jwk key, issuer->second->Find(token.kid, token.alg));
  if (Status verified = VerifyJwsSignature(token.alg, key, token.signing_input, token.signature);
      !verified.ok()) {
    return Error(ErrorCode::kPermissionDenied, verified.error().message);
  }
  ExpectedClaims expected;
  expected.issuer = issuer->first;
  expected.resource = resource_;
  expected.now = clock_.WallNow();
  expected.leeway = options_.leeway;
  return CheckTokenClaims(token, expected);
}

const std::string& ResourceServer::ScopeFor(Access access) const {
  switch (access) {
    case Access::kRead:
      return options_.read_scope;
    case Access::kWrite:
      return options_.write_scope;
    case Access::kAny:
      break;
  }
  return no_scope_;
}

bool ResourceServer::Allows(const Principal& principal, Access access) const {
  return access == Access::kAny || principal.HasScope(ScopeFor(access));
}

std::string ResourceServer::Challenge(std::string_view problem) const {
  std::string value = "Bearer resource_metadata=" + Quote(metadata_url_) +
                      ", scope=" + Quote(options_.read_scope + " " + options_.write_scope);
  if (!problem.empty()) {
    value += ", error=\"invalid_token\", error_description=" + Quote(problem);
  }
  return value;
}

std::string ResourceServer::InsufficientScope(Access access) const {
  return "Bearer error=\"insufficient_scope\", scope=" + Quote(ScopeFor(access)) +
         ", resource_metadata=" + Quote(metadata_url_) +
         ", error_description=" + Quote("this request needs the scope " + ScopeFor(access));
}

}  // namespace imgmcp::oauth
