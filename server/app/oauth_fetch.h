// How the OAuth resource server (server/oauth) fetches an issuer's metadata and keys: a GET
// through the network module, with the proxy and CA settings Gemini calls use.
#pragma once

#include "server/app/config.h"
#include "server/oauth/oauth_options.h"

namespace imgmcp::app {

// The OAuth options of --oauth-issuer, --oauth-resource and --oauth-scopes, with their fetch.
oauth::OAuthOptions MakeOAuthOptions(const Config& config);

}  // namespace imgmcp::app
