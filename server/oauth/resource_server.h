// ResourceServer: imgmcp as an OAuth 2.1 resource server (docs/security.md, "OAuth"). It accepts
// the JWT access tokens (RFC 9068) of the trusted issuers for this server's resource URI, says who
// sent them (a Principal) and whether their scopes allow a request, and writes what clients
// discover it through: the protected-resource metadata (RFC 9728) and the `WWW-Authenticate`
// challenges of 401 and 403 answers. The HTTP transport (server/http) owns one; it is thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"
#include "server/oauth/introspection.h"
#include "server/oauth/issuer_keys.h"
#include "server/oauth/jwt.h"
#include "server/oauth/oauth_options.h"
#include "server/oauth/principal.h"
#include "server/oauth/principal_cache.h"

namespace imgmcp::oauth {

// What a request needs of a token beyond being valid (DESIGN: read for get_image, resources and
// listings; write for generate, edit, reset, save_to and cancelling tasks).
enum class Access { kAny, kRead, kWrite };

// The token of an `Authorization: Bearer <token>` header (the scheme in any case, spaces and tabs
// around it trimmed); kInvalidArgument when the header is missing or of another scheme.
Result<std::string_view> BearerToken(std::string_view authorization_header);

class ResourceServer {
 public:
  // `default_resource` is used when options.resource is empty (the listener's /mcp URL).
  // kInvalidArgument when an issuer or the resource is not a URL imgmcp accepts (oauth_urls.h).
  static Result<std::unique_ptr<ResourceServer>> Create(OAuthOptions options,
                                                        std::string default_resource);

  const std::string& resource() const { return resource_; }
  // Where the protected-resource metadata is (the path-suffixed form of RFC 9728 §3.1).
  const std::string& metadata_url() const { return metadata_url_; }
  // The metadata document: resource, authorization_servers, scopes_supported,
  // bearer_methods_supported.
  std::string MetadataJson() const;

  // The principal of an `Authorization: Bearer <token>` header. Errors: kInvalidArgument when
  // the header is missing or not a bearer token (a 401 without an error code), kPermissionDenied
  // when the token is not accepted (401 invalid_token; the message says which check failed), and
  // kUnavailable when an issuer's keys could not be fetched (503: the token may well be good).
  // An accepted JWT is remembered (its SHA-256) until its expiry, five minutes at most, so a
  // client repeating it costs no signature check.
  Result<Principal> Authenticate(std::string_view authorization_header) const;

  bool Allows(const Principal& principal, Access access) const;
  // The scope `access` needs ("" for kAny).
  const std::string& ScopeFor(Access access) const;

  // The WWW-Authenticate value of a 401: the metadata URL and the scopes, with
  // error="invalid_token" and its description when `problem` is not empty.
  std::string Challenge(std::string_view problem = "") const;
  // The WWW-Authenticate value of a 403 for a token lacking the scope `access` needs.
  std::string InsufficientScope(Access access) const;

 private:
  explicit ResourceServer(OAuthOptions options);
  // The signature and claims of a JWT access token.
  Result<Principal> Verify(const Jwt& token) const;

  const OAuthOptions options_;
  const SystemClock system_clock_;
  const Clock& clock_;
  std::string resource_;
  std::string metadata_url_;
  std::map<std::string, std::unique_ptr<IssuerKeys>, std::less<>> issuers_;  // by `iss`
  std::unique_ptr<TokenIntrospection> introspection_;  // with an introspection URL
  mutable PrincipalCache verified_;  // JWTs accepted lately: their signature is checked once
  const std::string no_scope_;
};

}  // namespace imgmcp::oauth
