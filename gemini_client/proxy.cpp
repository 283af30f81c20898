#include "gemini_client/proxy.h"

#include <arpa/inet.h>

#include <cstdint>
#include <optional>
#include <utility>

#include "common/ascii.h"
#include "common/decimal.h"
#include "common/host_port.h"

namespace imgmcp::gemini {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = ToAsciiLower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 && HexValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// A URL's "host[:port]" or "[v6][:port]" → host (without brackets) and port (or `default_port`);
// false unless both are usable for a connection.
bool AuthorityHostPort(std::string_view authority, int default_port, std::string* host, int* port) {
  Result<HostPort> split = SplitHostPort(authority);
  if (!split.ok()) return false;
  *host = std::move(split->host);
  *port = split->port.value_or(default_port);
  return !host->empty() && *port > 0;
}

bool ParseIpv4(const std::string& text, uint32_t* out) {
  in_addr addr{};
  if (inet_pton(AF_INET, text.c_str(), &addr) != 1) return false;
  *out = ntohl(addr.s_addr);
  return true;
}

// One NO_PROXY entry (lower-case, trimmed, not "*") against a lower-case host.
bool EntryMatches(std::string_view entry, const std::string& host, int port) {
  std::string name(entry);
  if (const size_t slash = name.find('/'); slash != std::string::npos) {
    uint32_t net = 0;
    uint32_t ip = 0;
    const std::optional<unsigned> bits = ParseDecimal<unsigned>(name.substr(slash + 1), 0, 32);
    if (!ParseIpv4(name.substr(0, slash), &net) || !ParseIpv4(host, &ip) || !bits) return false;
    const uint32_t mask = *bits == 0 ? 0 : ~uint32_t{0} << (32 - *bits);
    return (net & mask) == (ip & mask);
  }
  // "host", "host:port", "[v6]", "[v6]:port"; a bare IPv6 address ("::1") is all host, and
  // "host:" names no port it could match.
  if (Result<HostPort> split = SplitHostPort(entry); split.ok()) {
    if (split->port ? *split->port != port : entry.back() == ':') return false;
    name = std::move(split->host);
  }
  while (!name.empty() && name.front() == '.') name.erase(0, 1);
  if (name.empty()) return false;
  if (host == name) return true;
  return host.size() > name.size() &&
         host.compare(host.size() - name.size(), name.size(), name) == 0 &&
         host[host.size() - name.size() - 1] == '.';
}

}  // namespace

Result<ProxyServer> ParseProxyUrl(std::string_view url, std::string_view variable) {
  const std::string var(variable);
  std::string_view rest = TrimSpacesAndTabs(url);
  const size_t scheme_end = rest.find("://");
  if (scheme_end != std::string_view::npos) {
    const std::string scheme = AsciiLower(rest.substr(0, scheme_end));
    if (scheme != "http") {
      return MakeError(ErrorCode::kInvalidArgument, var + " must be an http:// proxy URL (" +
                                                        scheme + ":// proxies are not supported)");
    }
    rest.remove_prefix(scheme_end + 3);
  }
  const size_t slash = rest.find('/');
  if (slash != std::string_view::npos) {
    if (rest.substr(slash) != "/") {
      return MakeError(ErrorCode::kInvalidArgument,
                       var + " must look like http://[user:password@]host[:port], without a path");
    }
    rest = rest.substr(0, slash);
  }
  ProxyServer proxy;
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) {
    const std::string_view user_info = rest.substr(0, at);
    const size_t colon = user_info.find(':');
    proxy.username = PercentDecode(user_info.substr(0, colon));
    if (colon != std::string_view::npos)
      proxy.password = PercentDecode(user_info.substr(colon + 1));
    rest = rest.substr(at + 1);
  }
  if (!AuthorityHostPort(rest, 80, &proxy.host, &proxy.port)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     var + " must look like http://[user:password@]host[:port]");
  }
  return proxy;
}

bool NoProxyMatches(std::string_view no_proxy, std::string_view host, int port) {
  const std::string lower_host = AsciiLower(host);
  size_t start = 0;
  while (start <= no_proxy.size()) {
    size_t end = no_proxy.find(',', start);
    if (end == std::string_view::npos) end = no_proxy.size();
    const std::string entry = AsciiLower(TrimSpacesAndTabs(no_proxy.substr(start, end - start)));
    if (entry == "*") return true;
    if (!entry.empty() && EntryMatches(entry, lower_host, port)) return true;
    start = end + 1;
  }
  return false;
}

Result<std::optional<ProxyServer>> ChooseProxy(const ProxyEnvironment& env,
                                               const Endpoint& endpoint) {
  const std::string& url = endpoint.https ? env.https_proxy : env.http_proxy;
  if (url.empty()) return std::optional<ProxyServer>();
  std::string host;
  int port = 0;
  const std::string_view authority =
      std::string_view(endpoint.scheme_host_port).substr(endpoint.https ? 8 : 7);
  if (!AuthorityHostPort(authority, endpoint.https ? 443 : 80, &host, &port)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "cannot read the host of " + endpoint.scheme_host_port);
  }
  if (NoProxyMatches(env.no_proxy, host, port)) return std::optional<ProxyServer>();
  ASSIGN_OR_RETURN(ProxyServer proxy,
                   ParseProxyUrl(url, endpoint.https ? "HTTPS_PROXY" : "HTTP_PROXY"));
  return std::optional<ProxyServer>(std::move(proxy));
}

std::string DescribeProxy(const std::optional<ProxyServer>& proxy) {
  if (!proxy.has_value()) return "none";
  const bool v6 = proxy->host.find(':') != std::string::npos;
  return (v6 ? "[" + proxy->host + "]" : proxy->host) + ":" + std::to_string(proxy->port) +
         (proxy->username.empty() ? "" : " (with credentials)");
}

}  // namespace imgmcp::gemini
