// The URLs of OAuth's discovery documents, and which URLs imgmcp accepts for an issuer, a JWK Set,
// an introspection endpoint or its own resource. No I/O: the flags are checked with these at
// start-up (server/app), and the resource server (resource_server.h) derives its metadata
// addresses from them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace imgmcp::oauth {

// An absolute URL as OAuth uses it: https, or plain http to a loopback host (127.0.0.1,
// localhost, [::1]); no query, fragment or user info. `origin` is "scheme://host[:port]",
// `path` is "" or "/…" as written (a trailing slash is kept: it makes another resource).
struct OAuthUrl {
  std::string origin;
  std::string path;
};
// `what` names the flag or field in errors ("--oauth-issuer").
Result<OAuthUrl> ParseOAuthUrl(std::string_view url, std::string_view what);

// Where an issuer's metadata may be, in the order they are tried: RFC 8414's
// /.well-known/oauth-authorization-server (inserted before the issuer's path), then OpenID
// Connect Discovery's /.well-known/openid-configuration (appended to the issuer).
std::vector<std::string> IssuerMetadataUrls(const OAuthUrl& issuer);

// RFC 9728 §3.1: the protected-resource metadata of `resource`, /.well-known/
// oauth-protected-resource inserted before the resource's path ("http://h/mcp" →
// "http://h/.well-known/oauth-protected-resource/mcp").
std::string ProtectedResourceMetadataUrl(const OAuthUrl& resource);

}  // namespace imgmcp::oauth
