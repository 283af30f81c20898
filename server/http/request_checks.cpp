#include "server/http/request_checks.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "common/ascii.h"
#include "common/base64.h"

namespace imgmcp::http {

namespace {

bool AllDigits(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

}  // namespace

std::string HostnameOf(std::string_view authority) {
  authority = TrimSpacesAndTabs(authority);
  if (authority.empty()) return "";
  if (authority.front() == '[') {  // IPv6 literal: "[addr]" or "[addr]:port"
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return "";
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || !AllDigits(rest.substr(1)))) return "";
    return AsciiLower(authority.substr(0, close + 1));
  }
  const size_t colon = authority.find(':');
  std::string_view name = authority.substr(0, colon);
  if (colon != std::string_view::npos && !AllDigits(authority.substr(colon + 1))) return "";
  if (name.empty() || name.find_first_of("/@ \t") != std::string_view::npos) return "";
  return AsciiLower(name);
}

std::optional<int> PortOf(std::string_view authority) {
  authority = TrimSpacesAndTabs(authority);
  size_t colon = std::string_view::npos;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    if (close + 1 < authority.size() && authority[close + 1] == ':') colon = close + 1;
  } else {
    colon = authority.find(':');
  }
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view digits = authority.substr(colon + 1);
  if (digits.empty() || digits.size() > 5 || !AllDigits(digits)) return std::nullopt;
  const int port = std::stoi(std::string(digits));
  return port <= 65535 ? std::optional<int>(port) : std::nullopt;
}

OriginPolicy::OriginPolicy(std::vector<std::string> extra_hosts, std::vector<std::string> own_hosts,
                           int own_port)
    : own_port_(own_port) {
  for (const std::string& host : extra_hosts) {
    std::string name = HostnameOf(host);
    if (!name.empty()) extra_hosts_.push_back(Allowed{std::move(name), PortOf(host)});
  }
  for (const std::string& host : own_hosts) {
    std::string name = HostnameOf(host);
    if (!name.empty()) own_hosts_.push_back(std::move(name));
  }
}

bool OriginPolicy::OwnName(const std::string& hostname) const {
  if (hostname == "localhost" || hostname == "127.0.0.1" || hostname == "[::1]") return true;
  return std::find(own_hosts_.begin(), own_hosts_.end(), hostname) != own_hosts_.end();
}

bool OriginPolicy::HostAllowed(std::string_view host_header) const {
  if (TrimSpacesAndTabs(host_header).empty()) return true;
  const std::string name = HostnameOf(host_header);
  if (name.empty()) return false;
  return OwnName(name) || std::any_of(extra_hosts_.begin(), extra_hosts_.end(),
                                      [&name](const Allowed& a) { return a.name == name; });
}

bool OriginPolicy::OriginAllowed(std::string_view origin_header) const {
  std::string_view origin = TrimSpacesAndTabs(origin_header);
  if (origin.empty()) return true;
  const std::string lowered = AsciiLower(origin);
  std::string_view rest;
  int default_port = 0;
  if (lowered.rfind("http://", 0) == 0) {
    rest = std::string_view(lowered).substr(7);
    default_port = 80;
  } else if (lowered.rfind("https://", 0) == 0) {
    rest = std::string_view(lowered).substr(8);
    default_port = 443;
  } else {
    return false;  // "null", other schemes, garbage
  }
  const size_t slash = rest.find('/');
  if (slash != std::string_view::npos) {
    if (rest.substr(slash) != "/") return false;  // an Origin never carries a path
    rest = rest.substr(0, slash);
  }
  const std::string name = HostnameOf(rest);
  if (name.empty()) return false;
  const bool names_port =
      rest.find(':', rest.front() == '[' ? rest.find(']') : 0) != std::string_view::npos;
  const std::optional<int> explicit_port = PortOf(rest);
  if (names_port && !explicit_port) return false;
  const int port = explicit_port.value_or(default_port);
  if (OwnName(name) && own_port_ != 0 && port == own_port_) return true;
  return std::any_of(extra_hosts_.begin(), extra_hosts_.end(), [&](const Allowed& a) {
    return a.name == name && (!a.port || *a.port == port);
  });
}

bool AcceptsMediaType(std::string_view accept_header, std::string_view media_type) {
  const std::string_view family = media_type.substr(0, media_type.find('/'));
  std::string_view rest = accept_header;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    item = TrimSpacesAndTabs(item.substr(0, item.find(';')));
    if (EqualsIgnoreAsciiCase(item, media_type) || item == "*/*") return true;
    if (item.size() == family.size() + 2 && item.substr(family.size()) == "/*" &&
        EqualsIgnoreAsciiCase(item.substr(0, family.size()), family)) {
      return true;
    }
  }
  return false;
}

bool IsJsonContentType(std::string_view content_type) {
  return EqualsIgnoreAsciiCase(TrimSpacesAndTabs(content_type.substr(0, content_type.find(';'))),
                               "application/json");
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // Every byte of the longer string is visited whatever the contents.
  const size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

bool BearerTokenMatches(std::string_view authorization_header, std::string_view token) {
  std::string_view value = TrimSpacesAndTabs(authorization_header);
  constexpr std::string_view kScheme = "bearer ";
  if (value.size() < kScheme.size() || AsciiLower(value.substr(0, kScheme.size())) != kScheme) {
    return false;
  }
  return ConstantTimeEquals(TrimSpacesAndTabs(value.substr(kScheme.size())), token);
}

EraChoice ChooseEra(const mcp::RequestFacts& facts, const McpHeaders& headers) {
  using Kind = mcp::IncomingMessage::Kind;
  EraChoice choice;
  const bool header_modern =
      headers.protocol_version && mcp::IsModernVersionName(*headers.protocol_version);
  if (facts.kind != Kind::kRequest && facts.kind != Kind::kNotification) return choice;
  if (facts.kind == Kind::kRequest && facts.method == mcp::methods::kInitialize &&
      !facts.envelope_claim) {
    if (header_modern) {
      choice.refusal = mcp::HeaderMismatch(
          "an initialize request (the legacy handshake) came with MCP-Protocol-Version " +
          mcp::Quoted(*headers.protocol_version));
    }
    return choice;
  }
  if (facts.envelope_claim || header_modern) choice.era = mcp::Era::kModern;
  return choice;
}

std::optional<std::string> DecodeHeaderValue(std::string_view value) {
  constexpr std::string_view kPrefix = "=?base64?";
  constexpr std::string_view kSuffix = "?=";
  if (value.size() < kPrefix.size() + kSuffix.size() ||
      value.substr(0, kPrefix.size()) != kPrefix ||
      value.substr(value.size() - kSuffix.size()) != kSuffix) {
    return std::string(value);
  }
  auto decoded =
      Base64Decode(value.substr(kPrefix.size(), value.size() - kPrefix.size() - kSuffix.size()));
  if (!decoded.ok()) return std::nullopt;
  return std::move(decoded).value();
}

std::optional<mcp::RpcError> CheckModernHeaders(const mcp::RequestFacts& facts,
                                                const McpHeaders& headers) {
  if (!headers.protocol_version) {
    return mcp::HeaderMismatch("the MCP-Protocol-Version header is required");
  }
  if (facts.claimed_version && *headers.protocol_version != *facts.claimed_version) {
    return mcp::HeaderMismatch(
        "MCP-Protocol-Version header value '" + mcp::Quoted(*headers.protocol_version) +
        "' does not match the body's _meta version '" + mcp::Quoted(*facts.claimed_version) + "'");
  }
  if (facts.kind != mcp::IncomingMessage::Kind::kRequest) return std::nullopt;
  if (!headers.method) return mcp::HeaderMismatch("the Mcp-Method header is required");
  if (*headers.method != facts.method) {
    return mcp::HeaderMismatch("Mcp-Method header value '" + mcp::Quoted(*headers.method) +
                               "' does not match body value '" + mcp::Quoted(facts.method) + "'");
  }
  if (!facts.name) return std::nullopt;  // the method has no Mcp-Name, or the body no value
  if (!headers.name) {
    return mcp::HeaderMismatch("the Mcp-Name header is required for " + facts.method);
  }
  const std::optional<std::string> name = DecodeHeaderValue(*headers.name);
  if (!name) return mcp::HeaderMismatch("the Mcp-Name header has an invalid Base64 value");
  if (*name != *facts.name) {
    return mcp::HeaderMismatch("Mcp-Name header value '" + mcp::Quoted(*name) +
                               "' does not match body value '" + mcp::Quoted(*facts.name) + "'");
  }
  return std::nullopt;
}

int ModernErrorStatus(int code, bool before_dispatch) {
  if (code == mcp::rpc_error::kMissingClientCapability) return 400;
  if (!before_dispatch) return 200;
  return code == mcp::rpc_error::kMethodNotFound ? 404 : 400;
}

}  // namespace imgmcp::http
