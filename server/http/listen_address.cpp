#include "server/http/listen_address.h"

#include <charconv>

namespace imgmcp::http {

namespace {

Error Invalid(std::string_view text, const std::string& why) {
  return MakeError(ErrorCode::kInvalidArgument,
                   "invalid address '" + std::string(text) + "': " + why +
                       " (expected [HOST:]PORT, e.g. 8080 or 127.0.0.1:8080)");
}

}  // namespace

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  ListenAddress address;
  std::string_view port_text = text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return Invalid(text, "an IPv6 host needs the form [ADDR]:PORT");
    }
    address.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else if (const size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    if (text.find(':') != colon) return Invalid(text, "put IPv6 hosts in brackets");
    address.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  if (address.host.empty()) return Invalid(text, "empty host");
  int port = -1;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
      port < 0 || port > 65535) {
    return Invalid(text, "the port must be a number from 0 to 65535");
  }
  address.port = port;
  return address;
}

std::string EndpointUrl(const std::string& host, int port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return "http://" + (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + "/mcp";
}

}  // namespace imgmcp::http
