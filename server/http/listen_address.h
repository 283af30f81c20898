// The --http [HOST:]PORT argument, and the URL the transport then serves.
#pragma once

#include <string>
#include <string_view>

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

}  // namespace imgmcp::http
