// Where OAuth access tokens come from (Application Default Credentials, adc.h): a service
// account's signed JWT, an authorized user's refresh token, or the metadata server. A TokenSource
// makes one token request per Fetch; TokenCache (token_cache.h) decides when to call it.
#pragma once

#include <chrono>
#include <memory>
#include <stop_token>
#include <string>

#include "common/result.h"
#include "gemini_client/http_call.h"
#include "gemini_client/proxy.h"

namespace imgmcp::gemini {

inline constexpr char kCloudPlatformScope[] = "https://www.googleapis.com/auth/cloud-platform";

struct AccessToken {
  std::string token;  // never logged, never in an error
  std::chrono::seconds expires_in{0};
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
