// The three OAuth token sources of Application Default Credentials (adc.h): a service account
// (an RS256-signed JWT exchanged at its token_uri, RFC 7523), an authorized user (a refresh-token
// grant, RFC 6749 §6) and the metadata server of a Google Cloud VM. Each Fetch is one request.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gemini_client/adc.h"
#include "gemini_client/token_source.h"

namespace imgmcp::gemini {

std::unique_ptr<TokenSource> MakeServiceAccountSource(const AdcCredentials& credentials,
                                                      const NetworkAccess& access);
std::unique_ptr<TokenSource> MakeAuthorizedUserSource(const AdcCredentials& credentials,
                                                      const NetworkAccess& access);
std::unique_ptr<TokenSource> MakeMetadataSource(const std::string& host,
                                                const NetworkAccess& access);

// The signed JWT a service account sends (exposed for tests): header {alg RS256, typ JWT, kid},
// claims {iss, scope, aud, iat, exp = iat + 3600}, base64url without padding.
Result<std::string> MakeServiceAccountJwt(const std::string& client_email,
                                          const std::string& private_key_id,
                                          const std::string& private_key_pem,
                                          const std::string& audience, int64_t issued_at,
                                          SignRs256Function sign);

// A token endpoint's answer (exposed for tests): {"access_token": "...", "expires_in": N} gives
// the token with N clamped to [kMinTokenLifetime, kMaxTokenLifetime] (3600 s when absent); a
// token over kMaxAccessTokenBytes or with characters a header cannot carry is an error. Other
// answers are errors naming `who` with the OAuth error code and description, `secrets` (what the
// request sent) redacted from them.
Result<AccessToken> ParseTokenAnswer(const HttpAnswer& answer, const std::string& who,
                                     const std::vector<std::string>& secrets);

}  // namespace imgmcp::gemini
