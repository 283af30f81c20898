#include "server/http/listen_address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "common/decimal.h"
#include "common/host_port.h"
#include "server/http/gallery_route.h"

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
  std::optional<int> port;
  if (text.empty() || (text.front() != '[' && text.find(':') == std::string_view::npos)) {
    port = ParseDecimal<uint16_t>(text);  // PORT alone
  } else {
    Result<HostPort> split = SplitHostPort(text);
    if (!split.ok()) return Invalid(text, split.error().message);
    if (split->bracketed && text.back() == ']') {
      return Invalid(text, "an IPv6 host needs the form [ADDR]:PORT");
    }
    if (split->host.empty()) return Invalid(text, "empty host");
    address.host = std::move(split->host);
    port = split->port;
  }
  if (!port) return Invalid(text, "the port must be a number from 0 to 65535");
  address.port = *port;
  return address;
}

std::string EndpointUrl(const std::string& host, int port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return "http://" + (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + "/mcp";
}

std::optional<std::string> GalleryPageUrl(std::string_view mcp_url) {
  constexpr std::string_view kMcp = "/mcp";
  if (!mcp_url.ends_with(kMcp)) return std::nullopt;
  return std::string(mcp_url.substr(0, mcp_url.size() - kMcp.size())) + kGalleryPath;
}

bool IsLoopbackHost(const std::string& host) {
  std::string h = host;
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (h == "localhost") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, h.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

bool IsWildcardHost(const std::string& host) {
  return host == "0.0.0.0" || host == "::" || host == "[::]";
}

std::vector<std::string> LocalInterfaceAddresses() {
  std::vector<std::string> addresses;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return addresses;
  for (ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr) continue;
    char text[INET6_ADDRSTRLEN] = {};
    if (ifa->ifa_addr->sa_family == AF_INET) {
      const auto* a = reinterpret_cast<const sockaddr_in*>(ifa->ifa_addr);
      if (::inet_ntop(AF_INET, &a->sin_addr, text, sizeof text)) addresses.emplace_back(text);
    } else if (ifa->ifa_addr->sa_family == AF_INET6) {
      const auto* a = reinterpret_cast<const sockaddr_in6*>(ifa->ifa_addr);
      if (IN6_IS_ADDR_LINKLOCAL(&a->sin6_addr)) continue;  // needs a zone: not in a Host header
      if (::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text)) {
        addresses.push_back("[" + std::string(text) + "]");
      }
    }
  }
  ::freeifaddrs(list);
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
  return addresses;
}

}  // namespace imgmcp::http
