// Who made a request on an OAuth-protected server: the (issuer, subject) pair of its access token,
// the client it used and the scopes it was granted.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace imgmcp::oauth {

struct Principal {
  std::string issuer;     // the token's `iss`
  std::string subject;    // its `sub`
  std::string client_id;  // `client_id`, else `azp`; "" when it names neither
  std::vector<std::string> scopes;
  std::chrono::system_clock::time_point expires;  // the token's `exp`
  // Whose sessions and tasks its requests reach: an opaque digest of (issuer, subject), made
  // once when its token is accepted (PrincipalKey).
  std::string key;
  // Not "" for the bearer of a gallery link (the HTTP transport's OAuthGate admits one): the one
  // session of the principal `key` it reaches, read-only.
  std::string only_session;

  bool HasScope(std::string_view scope) const {
    return std::find(scopes.begin(), scopes.end(), scope) != scopes.end();
  }
};

}  // namespace imgmcp::oauth
