// Why a call through a proxy failed, when the proxy itself refused it: proxies such as tinyproxy
// answer a wrong password with 401 and close, which the HTTP client reports only as a broken
// connection (or, for a CONNECT tunnel, a failed TLS handshake). After such a failure,
// http_call.cpp asks the proxy once more, with the same Proxy-Authorization, and reads nothing
// but its status line.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "gemini_client/http_call.h"

namespace imgmcp::gemini {

// Sends `CONNECT target_host_port` (e.g. "example.com:443") to the proxy with its credentials
// and returns the status code of its answer, or 0 when none arrived within `timeout` (no
// connection, no status line, an unparsable one). Never retries; never logs the credentials.
int ProbeProxyStatus(const ProxyServer& proxy, std::string_view target_host_port,
                     std::chrono::milliseconds timeout);

// "host:port" of an endpoint's "scheme://host[:port]" (the scheme's port when it names none).
std::string EndpointHostPort(const Endpoint& endpoint);

// Whether a proxy status means the proxy refused the credentials (401 or 407).
inline bool IsProxyAuthRefusal(int status) { return status == 401 || status == 407; }

}  // namespace imgmcp::gemini
