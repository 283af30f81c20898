// Which proxy an outgoing call uses, from HTTPS_PROXY / HTTP_PROXY / NO_PROXY (and their
// lower-case forms, which win), as curl and Google's client libraries read them. Plain string
// rules, no I/O: http_call.cpp only applies the ProxyServer chosen here.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "gemini_client/http_call.h"

namespace imgmcp::gemini {

struct ProxyEnvironment {
  std::string https_proxy;  // for https:// targets (CONNECT tunnel)
  std::string http_proxy;   // for http:// targets (absolute-URI requests)
  std::string no_proxy;     // comma-separated exceptions
};

// "http://[user[:password]@]host[:port][/]" (scheme optional, port default 80; user and password
// percent-decoded). An https:// proxy is refused (TLS to the proxy is not supported). Errors
// never repeat the URL, which may hold a password.
Result<ProxyServer> ParseProxyUrl(std::string_view url, std::string_view variable);

// NO_PROXY matching: "*" matches every host; each other entry (blanks ignored) is a host name,
// matched exactly or as a domain suffix (".example.com" and "example.com" both match
// "a.example.com"), an IP address matched exactly, or an IPv4 CIDR block ("10.0.0.0/8"); an
// entry with ":port" matches only that port. Case-insensitive.
bool NoProxyMatches(std::string_view no_proxy, std::string_view host, int port);

// The proxy for a call to `endpoint`, or none (no variable for its scheme, or NO_PROXY matches).
Result<std::optional<ProxyServer>> ChooseProxy(const ProxyEnvironment& env,
                                               const Endpoint& endpoint);

// "127.0.0.1:3128" (never the credentials), for --self-check and logs; "none" without a proxy.
std::string DescribeProxy(const std::optional<ProxyServer>& proxy);

}  // namespace imgmcp::gemini
