// Pure checks on HTTP request headers for the Streamable HTTP transport: the Host/Origin
// allow-list (DNS-rebinding protection), Accept and Content-Type negotiation, and the bearer
// token. No I/O, no httplib: unit-tested directly.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace imgmcp::http {

// The host part of an authority ("localhost:8080" → "localhost", "[::1]:80" → "[::1]"),
// lower-cased. Empty when malformed.
std::string HostnameOf(std::string_view authority);

// Loopback names (localhost, 127.0.0.1, [::1]) on any port, plus configured extra host names.
class OriginPolicy {
 public:
  explicit OriginPolicy(std::vector<std::string> extra_hosts = {});
  // The Host header. A missing header (empty) is accepted: only browsers can be tricked into
  // rebinding, and they always send Host.
  bool HostAllowed(std::string_view host_header) const;
  // The Origin header: "http(s)://host[:port]". Missing (empty) is accepted (CLI clients send
  // none); "null" and anything unparsable are refused.
  bool OriginAllowed(std::string_view origin_header) const;

 private:
  bool NameAllowed(const std::string& hostname) const;
  std::vector<std::string> extra_hosts_;  // lower-cased host names
};

// True when the Accept header admits `media_type` ("application/json", "text/event-stream"),
// directly or through a wildcard ("*/*", "text/*").
bool AcceptsMediaType(std::string_view accept_header, std::string_view media_type);
// True for "application/json" with optional parameters (e.g. "; charset=utf-8").
bool IsJsonContentType(std::string_view content_type);

// Compares in time that depends only on the lengths, not on where the strings differ.
bool ConstantTimeEquals(std::string_view a, std::string_view b);
// True when `authorization_header` is "Bearer <token>" (scheme case-insensitive) with exactly
// `token`.
bool BearerTokenMatches(std::string_view authorization_header, std::string_view token);

}  // namespace imgmcp::http
