#include "server/http/request_checks.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "common/ascii.h"
#include "common/base64.h"
#include "common/host_port.h"

namespace imgmcp::http {

namespace {

// What a malformed Mcp-Name or Mcp-Param-* value is (DecodeHeaderValue), for error messages.
constexpr std::string_view kMalformedValue =
    "a =?base64?…?= value must be canonical Base64: A-Z a-z 0-9 + /, padded with = to a "
    "multiple of 4; any other value only visible ASCII, spaces and tabs";

// RFC 9110 field-value characters a plain Mcp-Name or Mcp-Param-* value may have: visible ASCII,
// space and tab (anything else travels Base64-encoded).
bool IsHeaderSafe(char ch) {
  const auto c = static_cast<unsigned char>(ch);
  return c == '\t' || (c >= 0x20 && c <= 0x7e);
}

// Base64 as RFC 4648 §4 writes it: the standard alphabet, whole groups of 4, '=' only as the
// last one or two characters.
bool IsCanonicalBase64(std::string_view text) {
  if (text.size() % 4 != 0) return false;
  size_t pads = 0;
  while (pads < 2 && pads < text.size() && text[text.size() - 1 - pads] == '=') ++pads;
  return std::all_of(text.begin(), text.end() - static_cast<std::ptrdiff_t>(pads),
                     [](char c) { return IsAsciiAlnum(c) || c == '+' || c == '/'; });
}

}  // namespace

std::string HostnameOf(std::string_view authority) {
  const Result<HostPort> split = SplitHostPort(TrimSpacesAndTabs(authority));
  if (!split.ok() || split->host.empty()) return "";
  if (split->bracketed) return "[" + AsciiLower(split->host) + "]";
  if (split->host.find_first_of("/@ \t") != std::string::npos) return "";
  return AsciiLower(split->host);
}

std::optional<int> PortOf(std::string_view authority) {
  const Result<HostPort> split = SplitHostPort(TrimSpacesAndTabs(authority));
  return split.ok() ? split->port : std::nullopt;
}

OriginPolicy::OriginPolicy(const std::vector<std::string>& extra_hosts,
                           const std::vector<std::string>& own_hosts, int own_port)
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
    if (!std::all_of(value.begin(), value.end(), IsHeaderSafe)) return std::nullopt;
    return std::string(value);
  }
  const std::string_view base64 =
      value.substr(kPrefix.size(), value.size() - kPrefix.size() - kSuffix.size());
  if (!IsCanonicalBase64(base64)) return std::nullopt;
  auto decoded = Base64Decode(base64);
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
  if (!name) {
    return mcp::HeaderMismatch("the Mcp-Name header has an invalid value (" +
                               std::string(kMalformedValue) + ")");
  }
  if (*name != *facts.name) {
    return mcp::HeaderMismatch("Mcp-Name header value '" + mcp::Quoted(*name) +
                               "' does not match body value '" + mcp::Quoted(*facts.name) + "'");
  }
  return std::nullopt;
}

namespace {

constexpr char kParamAnnotation[] = "x-mcp-header";
constexpr std::string_view kParamHeaderPrefix = "Mcp-Param-";

void CollectParamHeaders(const Json& schema, std::vector<std::string>& path,
                         std::vector<ParamHeader>& out) {
  const auto properties = schema.find("properties");
  if (properties == schema.end() || !properties->is_object()) return;
  for (const auto& [key, property] : properties->items()) {
    if (!property.is_object()) continue;
    path.push_back(key);
    const auto annotation = property.find(kParamAnnotation);
    if (annotation != property.end() && annotation->is_string()) {
      const auto type = property.find("type");
      out.push_back(ParamHeader{
          path, annotation->get<std::string>(),
          type != property.end() && type->is_string() ? type->get<std::string>() : std::string()});
    }
    CollectParamHeaders(property, path, out);
    path.pop_back();
  }
}

// The argument at `path`; nullptr when it is absent or null.
const Json* ArgumentAt(const Json& arguments, const std::vector<std::string>& path) {
  const Json* node = &arguments;
  for (const std::string& key : path) {
    if (!node->is_object()) return nullptr;
    const auto it = node->find(key);
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return node->is_null() ? nullptr : node;
}

// An argument as a client writes it into its header: a string as it is, a boolean "true" or
// "false", a number in decimal; nullopt for what has no header form (objects, arrays).
std::optional<std::string> MirroredForm(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number()) return value.dump();
  return std::nullopt;
}

// The header's (decoded) value stands for the argument: the same text, or for an integer
// property the same number ("42.0" and 42).
bool SameValue(const ParamHeader& param, const Json& argument, const std::string& header_value,
               const std::string& body_value) {
  if (header_value == body_value) return true;
  if (param.type != "integer" || !argument.is_number() || header_value.empty()) return false;
  char* end = nullptr;
  const double number = std::strtod(header_value.c_str(), &end);
  const bool decimal = end == header_value.c_str() + header_value.size() &&
                       header_value.find_first_not_of("-0123456789.") == std::string::npos;
  return decimal && number == argument.get<double>();
}

std::string JoinPath(const std::vector<std::string>& path) {
  std::string joined;
  for (const std::string& key : path) joined.append(joined.empty() ? "" : ".").append(key);
  return joined;
}

std::optional<mcp::RpcError> CheckParamHeader(const ParamHeader& param, const Json& arguments,
                                              const RequestHeaders& headers, bool header_required) {
  const std::string header = std::string(kParamHeaderPrefix) + param.name;
  const std::string field = "arguments." + JoinPath(param.path);
  const Json* argument = ArgumentAt(arguments, param.path);
  const std::optional<std::string> body = argument ? MirroredForm(*argument) : std::nullopt;
  const size_t lines = headers.CountParam(param.name);
  if (lines > 1) return mcp::HeaderMismatch("more than one " + header + " header");
  if (lines == 0) {
    if (!body || !header_required) return std::nullopt;
    return mcp::HeaderMismatch("the " + header + " header is required: the body has " + field +
                               " '" + mcp::Quoted(*body) + "'");
  }
  if (!body) {
    return mcp::HeaderMismatch("the " + header + " header came, but the body has no " + field +
                               " for it to mirror");
  }
  const std::optional<std::string> value = DecodeHeaderValue(*headers.GetParam(param.name));
  if (!value) {
    return mcp::HeaderMismatch("the " + header + " header has an invalid value (" +
                               std::string(kMalformedValue) + ")");
  }
  if (!SameValue(param, *argument, *value, *body)) {
    return mcp::HeaderMismatch(header + " header value '" + mcp::Quoted(*value) +
                               "' does not match body value '" + mcp::Quoted(*body) + "' (" +
                               field + ")");
  }
  return std::nullopt;
}

}  // namespace

std::vector<ParamHeader> ParamHeadersOf(const Json& input_schema) {
  std::vector<ParamHeader> declared;
  std::vector<std::string> path;
  if (input_schema.is_object()) CollectParamHeaders(input_schema, path, declared);
  return declared;
}

std::optional<mcp::RpcError> CheckParamHeaders(const std::vector<ParamHeader>& declared,
                                               const Json& arguments, const RequestHeaders& headers,
                                               bool header_required) {
  for (const ParamHeader& param : declared) {
    if (auto refusal = CheckParamHeader(param, arguments, headers, header_required)) {
      return refusal;
    }
  }
  return std::nullopt;
}

std::optional<int64_t> TooManyRequestsRetryAfter(int error_code, const std::string& json) {
  if (error_code != mcp::rpc_error::kTooManyRequests) return std::nullopt;
  int64_t seconds = 1;
  const Json answer = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (answer.is_object()) {
    const Json* data = nullptr;
    if (auto error = answer.find("error"); error != answer.end() && error->is_object()) {
      if (auto d = error->find("data"); d != error->end() && d->is_object()) data = &*d;
    }
    if (data != nullptr) {
      auto retry = data->find("retryAfterSeconds");
      if (retry != data->end() && retry->is_number_integer()) {
        seconds = std::max<int64_t>(1, retry->get<int64_t>());
      }
    }
  }
  return seconds;
}

int ModernErrorStatus(int code, bool before_dispatch) {
  if (code == mcp::rpc_error::kMissingClientCapability) return 400;
  if (!before_dispatch) return 200;
  return code == mcp::rpc_error::kMethodNotFound ? 404 : 400;
}

}  // namespace imgmcp::http
