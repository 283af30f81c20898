// Pure checks on HTTP requests for the Streamable HTTP transport: the Host/Origin allow-list
// (DNS-rebinding protection), Accept and Content-Type negotiation, the bearer token, which era
// serves a POST, the header checks of modern requests (and of the tool arguments mirrored into
// Mcp-Param-* headers) and the HTTP status of their errors. No I/O, no httplib: unit-tested
// directly.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "mcp/json_rpc.h"
#include "mcp/method_table.h"
#include "mcp/protocol_version.h"
#include "server/http/request_head.h"

namespace imgmcp::http {

// The host part of an authority ("localhost:8080" → "localhost", "[::1]:80" → "[::1]"),
// lower-cased. Empty when malformed: as SplitHostPort (common/host_port.h) reads it — an IPv6
// address outside brackets, a port that is not 0-65535 — or a host holding '/', '@' or blanks.
std::string HostnameOf(std::string_view authority);

// The port of an authority ("localhost:8080" → 8080); nullopt when it names none or is malformed.
std::optional<int> PortOf(std::string_view authority);

// Which Host and Origin headers a server accepts (DNS-rebinding protection):
// - Host: the server's own names (localhost, 127.0.0.1, [::1] and `own_hosts`, e.g. the bind
//   address) and the `extra_hosts` names, on any port (only browsers can be tricked into
//   rebinding, and they always send Host).
// - Origin ("http(s)://host[:port]", the scheme's default port when it has none): one of the own
//   names on `own_port` — a page this server served — or an `extra_hosts` entry, on any port
//   when the entry names none (a proxy in front may listen anywhere) and on its port when it does.
class OriginPolicy {
 public:
  // `own_port` 0: not known yet (no Origin of an own name is accepted).
  explicit OriginPolicy(const std::vector<std::string>& extra_hosts = {},
                        const std::vector<std::string>& own_hosts = {}, int own_port = 0);
  // The Host header. A missing header (empty) is accepted.
  bool HostAllowed(std::string_view host_header) const;
  // The Origin header. Missing (empty) is accepted (CLI clients send none); "null" and anything
  // unparsable are refused.
  bool OriginAllowed(std::string_view origin_header) const;

 private:
  struct Allowed {
    std::string name;         // lower-cased host name
    std::optional<int> port;  // for an Origin: only this port; nullopt: any
  };
  bool OwnName(const std::string& hostname) const;
  std::vector<Allowed> extra_hosts_;
  std::vector<std::string> own_hosts_;  // lower-cased, besides the loopback names
  int own_port_ = 0;
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

// The MCP headers of one request as the client sent them (never percent-decoded), their values
// without surrounding whitespace; absent = nullopt. Views into the request head.
struct McpHeaders {
  std::optional<std::string_view> protocol_version;  // MCP-Protocol-Version
  std::optional<std::string_view> method;            // Mcp-Method
  std::optional<std::string_view> name;              // Mcp-Name
};

// Which era serves a POST of one message (2026-07-28 basic/versioning, and transports/
// streamable-http "Backward Compatibility"): modern when params._meta names a protocol version
// or the MCP-Protocol-Version header names a modern one (a modern header without the _meta is
// then answered -32602 by the core); legacy otherwise — initialize without _meta, responses,
// and requests and notifications without a modern claim. An initialize without _meta under a
// modern header is refused (-32020).
struct EraChoice {
  mcp::Era era = mcp::Era::kLegacy;
  std::optional<mcp::RpcError> refusal;  // answer with this (HTTP 400) instead
};
EraChoice ChooseEra(const mcp::RequestFacts& facts, const McpHeaders& headers);

// The header checks of a modern request (transports/streamable-http "Server Validation"):
// MCP-Protocol-Version and Mcp-Method present and equal to the body's version and method, and
// Mcp-Name (Base64 sentinel decoded) equal to params.name or params.uri where the method has
// one. The first failure as a -32020 HeaderMismatch error.
std::optional<mcp::RpcError> CheckModernHeaders(const mcp::RequestFacts& facts,
                                                const McpHeaders& headers);

// A header value of Mcp-Name or Mcp-Param-* (transports/streamable-http "Value Encoding"): the
// "=?base64?<Base64>?=" sentinel form decoded, any other value as it is. nullopt when the value
// is malformed: the sentinel's Base64 is not canonical (standard alphabet, padded to a multiple
// of 4), or a plain value has a byte outside visible ASCII, space and tab.
std::optional<std::string> DecodeHeaderValue(std::string_view value);

// One tool argument mirrored into a header (SEP-2243: an "x-mcp-header" annotation on a property
// of the tool's inputSchema): where its value is (the chain of `properties` keys from the root),
// the <Name> of its Mcp-Param-<Name> header, and the property's type ("string", "integer",
// "boolean").
struct ParamHeader {
  std::vector<std::string> path;
  std::string name;
  std::string type;
};
// The annotations of `input_schema` reached through `properties` keys only: an annotation
// anywhere else (under items, a composition, a $ref) is not statically reachable and mirrors
// nothing.
std::vector<ParamHeader> ParamHeadersOf(const Json& input_schema);

// The Mcp-Param-* checks of one tools/call (transports/streamable-http "Server Behavior for
// Custom Headers"), for each header the tool declares: a value in `arguments` (null counts as
// none) and its header come together, the header is a single line, and its value (decoded, see
// DecodeHeaderValue) equals the argument's string form (an integer's compared as a number).
// `header_required`: an argument without its header is refused too (a 2026-07-28 request; a
// legacy client may predate SEP-2243 and send none, but a header it does send must agree). The
// first failure as a -32020 HeaderMismatch error.
std::optional<mcp::RpcError> CheckParamHeaders(const std::vector<ParamHeader>& declared,
                                               const Json& arguments, const RequestHeaders& headers,
                                               bool header_required);

// The HTTP status answering a modern request with a JSON-RPC error (like the reference SDK):
// errors raised checking the request before any handler ran are 4xx (-32601 → 404, others 400),
// and so is -32021 wherever it arises; an error a handler answered with is an ordinary 200.
int ModernErrorStatus(int code, bool before_dispatch);
// For a JSON answer that is a per-person limit's refusal (-32029, mcp/call_limiter.h): the
// seconds its data.retryAfterSeconds says (at least 1), which HTTP answers as 429 with
// Retry-After. nullopt for any other answer.
std::optional<int64_t> TooManyRequestsRetryAfter(int error_code, const std::string& json);

}  // namespace imgmcp::http
