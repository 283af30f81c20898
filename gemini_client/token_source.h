// Where OAuth access tokens come from (Application Default Credentials, adc.h): a service
// account's signed JWT, an authorized user's refresh token, or the metadata server. A TokenSource
// makes one token request per Fetch; TokenCache (token_cache.h) decides when to call it.
#pragma once

#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "common/result.h"
#include "gemini_client/http_call.h"
#include "gemini_client/proxy.h"

namespace imgmcp::gemini {

inline constexpr char kCloudPlatformScope[] = "https://www.googleapis.com/auth/cloud-platform";

// An access token's lifetime is taken as the answer's expires_in clamped to these bounds
// (oauth_sources.cpp): a negative, zero, huge or non-integer one (1e300) can neither overflow
// the cache's clock arithmetic nor make every call fetch a token. A token that expires before
// its stated lifetime gets a 401, and TokenCache then fetches a fresh one.
inline constexpr std::chrono::seconds kMinTokenLifetime{60};
inline constexpr std::chrono::seconds kMaxTokenLifetime{24 * 3600};

struct AccessToken {
  std::string token;                   // never logged, never in an error
  std::chrono::seconds expires_in{0};  // within [kMinTokenLifetime, kMaxTokenLifetime]
};

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // One token request. Errors name the credential (its file) and what went wrong, never a
  // secret.
  virtual Result<AccessToken> Fetch(std::stop_token cancel,
                                    std::chrono::steady_clock::time_point deadline) = 0;
  // "service_account from /path/key.json (sa@project.iam.gserviceaccount.com)", …
  virtual std::string Describe() const = 0;
  // The long-lived secrets a request sends (a refresh token, a client secret), for redaction
  // (redact.h); the per-request ones (a signed JWT) are redacted by Fetch itself.
  virtual std::vector<std::string> Secrets() const { return {}; }
};

// What token sources need to reach the network: the module's functions and the options every
// outgoing call shares (timeouts, CAs, proxies).
struct NetworkAccess {
  SendHttpFunction send = nullptr;
  SignRs256Function sign = nullptr;
  HttpCallOptions http;  // timeouts and CAs; the proxy is chosen per endpoint from `proxies`
  ProxyEnvironment proxies;
};

// Sends `request` to the URL's origin with the proxy `access.proxies` choose for it.
Result<HttpAnswer> SendTo(const NetworkAccess& access, const std::string& url, HttpRequest request,
                          std::stop_token cancel, std::chrono::steady_clock::time_point deadline);

}  // namespace imgmcp::gemini
