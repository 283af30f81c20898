// The --http [HOST:]PORT argument, and the URL the transport then serves.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace imgmcp::http {

struct ListenAddress {
  std::string host = "127.0.0.1";  // IPv6 literals without brackets, e.g. "::1"
  int port = 0;                    // 0 = OS-chosen
};

// "8080", "127.0.0.1:8080", "localhost:0", "[::1]:8080", "0.0.0.0:80". kInvalidArgument (saying
// what is wrong) otherwise.
Result<ListenAddress> ParseListenAddress(std::string_view text);

// "http://HOST:PORT/mcp" (IPv6 hosts in brackets).
std::string EndpointUrl(const std::string& host, int port);
// The /gallery page's address beside the /mcp endpoint `mcp_url` (a public URL of this server's
// /mcp: they share a prefix); nullopt when `mcp_url` does not end in /mcp.
std::optional<std::string> GalleryPageUrl(std::string_view mcp_url);

// localhost, 127.0.0.0/8, ::1 (and IPv4-mapped 127.x). Other names count as not loopback.
bool IsLoopbackHost(const std::string& host);
// 0.0.0.0 or :: (every interface).
bool IsWildcardHost(const std::string& host);
// The IPv4 and IPv6 addresses of this machine's interfaces, as Host headers spell them
// ("192.168.1.5", "[fd00::5]"); link-local IPv6 addresses are left out.
std::vector<std::string> LocalInterfaceAddresses();

}  // namespace imgmcp::http
