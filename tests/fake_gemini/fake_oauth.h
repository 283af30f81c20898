// The fake's Google OAuth side (docs/generation.md, "Vertex AI"): a token endpoint that verifies
// service-account JWTs (RS256 signature against the test's public key; iss, scope, aud, iat, exp)
// and refresh-token grants, a metadata-server token route, and the bearer tokens it issued, which
// tests can expire on demand.
//
//   POST /token grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=JWT
//                               or grant_type=refresh_token&client_id&client_secret&refresh_token
//   GET  /computeMetadata/v1/instance/service-accounts/default/token   (Metadata-Flavor: Google)
//   POST /_fake/oauth           {"public_key_file", "client_email", "client_id", "client_secret",
//                                "refresh_token", "token_lifetime_s", "metadata": bool,
//                                fault modes: "expires_in": any number the answers carry instead
//                                of token_lifetime_s (e.g. 1e300), "access_token_bytes": N (issued
//                                tokens padded out to N bytes), "echo_request": bool (refuse
//                                every request, echoing its credentials in error_description),
//                                "hold": GATE (token requests wait at that gate, as the script
//                                action "hold" does: a hanging token endpoint)}
//   POST /_fake/expire_tokens   every token issued so far is rejected from now on (401)
//   GET  /_fake/token_requests  [{kind, ok, error, claims, token}] in arrival order
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/result.h"

namespace imgmcp::fake_gemini {

struct FakeOAuthSettings {
  std::string public_key_pem;  // the service account's public key (PEM); "" = none accepted
  std::string client_email;
  std::string client_id;
  std::string client_secret;
  std::string refresh_token;
  int64_t token_lifetime_s = 3600;
  bool metadata = true;            // the metadata route answers
  Json expires_in;                 // not null: the expires_in every answer carries
  int64_t access_token_bytes = 0;  // > 0: issued tokens are padded out to this length
  bool echo_request = false;       // refuse every request, quoting its credentials
  std::string hold;                // "" or the gate token requests wait at
};

class FakeOAuth {
 public:
  // `token_uri` is the aud a JWT must carry: the fake's own http://host:port/token.
  void SetTokenUri(std::string token_uri);
  Status Configure(const Json& config);
  void Reset();  // settings, tokens and the request log
  void ExpireTokens();
  Json TokenRequests() const;

  // The answer to POST /token (form body) or the metadata GET: HTTP status and JSON body.
  std::pair<int, std::string> HandleToken(const std::string& form_body);
  std::pair<int, std::string> HandleMetadata(bool flavor_header);
  // True when `token` was issued here and neither expired nor revoked.
  bool Valid(const std::string& token) const;
  // The gate token requests wait at ("" = none).
  std::string HoldGate() const;

 private:
  std::pair<int, std::string> Issue(const std::string& kind, const Json& claims);
  std::pair<int, std::string> Refuse(const std::string& kind, int status, const std::string& error,
                                     const std::string& description);
  std::string VerifyJwt(const std::string& jwt, const FakeOAuthSettings& settings,
                        Json* claims) const;

  // guards settings_, token_uri_, tokens_, requests_, serial_
  mutable std::mutex mutex_;
  FakeOAuthSettings settings_;
  std::string token_uri_;
  std::map<std::string, std::chrono::steady_clock::time_point> tokens_;  // token → expiry
  std::vector<Json> requests_;
  uint64_t serial_ = 0;
};

}  // namespace imgmcp::fake_gemini
