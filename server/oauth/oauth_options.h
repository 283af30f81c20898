// What the OAuth 2.1 resource server (resource_server.h) is configured with: the trusted
// authorization servers, this server's resource URI, the scope names, and how it fetches the
// issuers' metadata and keys. Plain data: server/app fills it from the flags, and the HTTP
// transport (server/http) builds its ResourceServer from it. docs/security.md, "OAuth", states
// the rules.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"

namespace imgmcp::oauth {

// The most of a metadata document or a JWK Set imgmcp reads (a JWK Set of a few keys is ~2 KiB).
inline constexpr size_t kMaxDiscoveryDocumentBytes = size_t{256} << 10;

// One fetched document: the HTTP status and body of a GET.
struct FetchedDocument {
  int status = 0;
  std::string body;
};
// GETs `url` (an issuer's metadata or its JWK Set) through the server's proxy and CA settings.
// Errors say what failed, naming the URL's host, never a credential.
using FetchFunction = std::function<Result<FetchedDocument>(const std::string& url)>;

// POSTs `form` (application/x-www-form-urlencoded) to `url` with `authorization` as its
// Authorization header: a token introspection (RFC 7662). Errors as FetchFunction's.
using PostFormFunction = std::function<Result<FetchedDocument>(
    const std::string& url, const std::string& form, const std::string& authorization)>;

struct OAuthOptions {
  // The authorization servers whose tokens are accepted, as their `iss` claim spells them.
  std::vector<std::string> issuers;
  // This server's canonical resource URI (RFC 8707), the `aud` a token must hold; "" → the
  // listener's own http://HOST:PORT/mcp.
  std::string resource;
  std::string read_scope = "imgmcp:read";
  std::string write_scope = "imgmcp:write";
  FetchFunction fetch;
  const Clock* clock = nullptr;  // nullptr: the system clock
  // How far `exp` and `nbf` may be off (clock skew between the issuer and this server).
  std::chrono::seconds leeway{60};
  // Opaque (non-JWT) access tokens: asked about at this RFC 7662 introspection endpoint with
  // these client credentials (client_secret_basic); "" refuses them.
  std::string introspection_url;
  std::string client_id;
  std::string client_secret;  // never logged or repeated in an error
  PostFormFunction post_form;
  // How long an introspection's answer is reused (and never past the token's expiry).
  std::chrono::seconds introspection_cache{60};
  // A token naming a key the cached set does not hold makes the issuer's keys be fetched again,
  // at most once per this interval (so random key ids cannot make the server fetch per request).
  std::chrono::milliseconds refetch_interval{2000};
};

}  // namespace imgmcp::oauth
