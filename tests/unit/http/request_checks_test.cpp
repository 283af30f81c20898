#include "server/http/request_checks.h"

#include <gtest/gtest.h>

namespace imgmcp::http {
namespace {

TEST(HostnameOfTest, StripsPortsAndLowercases) {
  EXPECT_EQ(HostnameOf("localhost"), "localhost");
  EXPECT_EQ(HostnameOf("LocalHost:8080"), "localhost");
  EXPECT_EQ(HostnameOf("127.0.0.1:1"), "127.0.0.1");
  EXPECT_EQ(HostnameOf("[::1]"), "[::1]");
  EXPECT_EQ(HostnameOf("[::1]:3000"), "[::1]");
  EXPECT_EQ(HostnameOf("[::1]x"), "");
  EXPECT_EQ(HostnameOf("host:port"), "");
  EXPECT_EQ(HostnameOf(""), "");
  EXPECT_EQ(HostnameOf("user@evil.com"), "");
  // Read as SplitHostPort reads it (common/host_port.h): IPv6 only in brackets, ports 0-65535.
  EXPECT_EQ(HostnameOf("::1"), "");
  EXPECT_EQ(HostnameOf("localhost:99999"), "");
  EXPECT_EQ(HostnameOf("[::1]:"), "[::1]");
}

TEST(PortOfTest, ExplicitPortsOnly) {
  EXPECT_EQ(PortOf("localhost:8080"), 8080);
  EXPECT_EQ(PortOf("[::1]:3000"), 3000);
  EXPECT_EQ(PortOf("localhost"), std::nullopt);
  EXPECT_EQ(PortOf("[::1]"), std::nullopt);
  EXPECT_EQ(PortOf("localhost:"), std::nullopt);
  EXPECT_EQ(PortOf("localhost:99999"), std::nullopt);
  EXPECT_EQ(PortOf("localhost:8o"), std::nullopt);
}

TEST(OriginPolicyTest, LoopbackHostsOnAnyPort) {
  OriginPolicy policy({}, {}, 8080);
  EXPECT_TRUE(policy.HostAllowed("localhost:1234"));
  EXPECT_TRUE(policy.HostAllowed("127.0.0.1"));
  EXPECT_TRUE(policy.HostAllowed("[::1]:80"));
  EXPECT_TRUE(policy.HostAllowed(""));  // no Host header at all
  EXPECT_FALSE(policy.HostAllowed("evil.example.com"));
  EXPECT_FALSE(policy.HostAllowed("evil.example.com:1234"));
  EXPECT_FALSE(policy.HostAllowed("localhost.evil.com"));
  EXPECT_FALSE(policy.HostAllowed("127.0.0.2"));
}

TEST(OriginPolicyTest, OriginsOfTheServersOwnPagesOnly) {
  OriginPolicy policy({}, {}, 8080);
  EXPECT_TRUE(policy.OriginAllowed(""));
  EXPECT_TRUE(policy.OriginAllowed("http://localhost:8080"));
  EXPECT_TRUE(policy.OriginAllowed("http://127.0.0.1:8080/"));
  EXPECT_TRUE(policy.OriginAllowed("http://[::1]:8080"));
  // Another local web app (another port) is another origin: it could drive the server otherwise.
  EXPECT_FALSE(policy.OriginAllowed("http://localhost:5173"));
  EXPECT_FALSE(policy.OriginAllowed("http://127.0.0.1:9999"));
  EXPECT_FALSE(policy.OriginAllowed("https://127.0.0.1"));  // port 443
  EXPECT_FALSE(policy.OriginAllowed("http://127.0.0.1"));   // port 80
  EXPECT_FALSE(policy.OriginAllowed("http://127.0.0.1:8o80"));
  EXPECT_FALSE(policy.OriginAllowed("null"));
  EXPECT_FALSE(policy.OriginAllowed("http://evil.example.com"));
  EXPECT_FALSE(policy.OriginAllowed("http://localhost.evil.example.com"));
  EXPECT_FALSE(policy.OriginAllowed("file://localhost"));
  EXPECT_FALSE(policy.OriginAllowed("http://localhost/path"));
}

TEST(OriginPolicyTest, ExtraHostsOnAnyPortUnlessTheyNameOne) {
  OriginPolicy policy({"MyBox.lan", "10.0.0.5:8080"}, {}, 3000);
  EXPECT_TRUE(policy.HostAllowed("mybox.lan:8080"));
  EXPECT_TRUE(policy.HostAllowed("10.0.0.5:1"));
  EXPECT_FALSE(policy.HostAllowed("otherbox.lan"));
  // A name without a port (behind a proxy, say) on any port and either scheme.
  EXPECT_TRUE(policy.OriginAllowed("https://mybox.lan"));
  EXPECT_TRUE(policy.OriginAllowed("http://mybox.lan:9999"));
  // A name with a port on that port only.
  EXPECT_TRUE(policy.OriginAllowed("http://10.0.0.5:8080"));
  EXPECT_FALSE(policy.OriginAllowed("http://10.0.0.5:9999"));
  EXPECT_FALSE(policy.OriginAllowed("http://10.0.0.5"));
}

TEST(OriginPolicyTest, TheBindAddressIsAnOwnName) {
  OriginPolicy policy({}, {"127.0.0.2"}, 4000);
  EXPECT_TRUE(policy.HostAllowed("127.0.0.2:4000"));
  EXPECT_TRUE(policy.OriginAllowed("http://127.0.0.2:4000"));
  EXPECT_FALSE(policy.OriginAllowed("http://127.0.0.2:4001"));
}

TEST(OriginPolicyTest, NoOwnOriginBeforeThePortIsKnown) {
  OriginPolicy policy;
  EXPECT_TRUE(policy.HostAllowed("localhost"));
  EXPECT_FALSE(policy.OriginAllowed("http://localhost:8080"));
}

TEST(AcceptsMediaTypeTest, ListsParametersAndWildcards) {
  const char* both = "application/json, text/event-stream";
  EXPECT_TRUE(AcceptsMediaType(both, "application/json"));
  EXPECT_TRUE(AcceptsMediaType(both, "text/event-stream"));
  EXPECT_TRUE(AcceptsMediaType("text/event-stream;q=0.9,application/json", "application/json"));
  EXPECT_TRUE(AcceptsMediaType("*/*", "text/event-stream"));
  EXPECT_TRUE(AcceptsMediaType("text/*", "text/event-stream"));
  EXPECT_FALSE(AcceptsMediaType("application/json", "text/event-stream"));
  EXPECT_FALSE(AcceptsMediaType("", "application/json"));
  EXPECT_FALSE(AcceptsMediaType("text/html", "text/event-stream"));
  // Media types compare without regard to case.
  EXPECT_TRUE(AcceptsMediaType("Application/JSON", "application/json"));
  EXPECT_TRUE(AcceptsMediaType("TEXT/*", "text/event-stream"));
  EXPECT_FALSE(AcceptsMediaType("text/", "text/event-stream"));
  EXPECT_FALSE(AcceptsMediaType("texts/*", "text/event-stream"));
}

TEST(IsJsonContentTypeTest, WithAndWithoutParameters) {
  EXPECT_TRUE(IsJsonContentType("application/json"));
  EXPECT_TRUE(IsJsonContentType("Application/JSON; charset=utf-8"));
  EXPECT_FALSE(IsJsonContentType("text/plain"));
  EXPECT_FALSE(IsJsonContentType(""));
  EXPECT_FALSE(IsJsonContentType("application/jsonx"));
}

TEST(BearerTokenTest, ExactMatchOnly) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(BearerTokenMatches("Bearer s3cret", "s3cret"));
  EXPECT_TRUE(BearerTokenMatches("bearer s3cret", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("Bearer s3cre", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("Bearer s3crett", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("Basic s3cret", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("s3cret", "s3cret"));
}

Json Request(const std::string& method, Json params = Json::object()) {
  return Json{{"jsonrpc", "2.0"}, {"id", 5}, {"method", method}, {"params", std::move(params)}};
}

Json Modern(Json params = Json::object(), const std::string& version = "2026-07-28") {
  params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", version},
                     {"io.modelcontextprotocol/clientCapabilities", Json::object()}};
  return params;
}

// The views point at string literals (static storage).
McpHeaders Headers(std::optional<std::string_view> version,
                   std::optional<std::string_view> method = {},
                   std::optional<std::string_view> name = {}) {
  return McpHeaders{version, method, name};
}

TEST(ChooseEraTest, ModernByTheBodysMetaOrAModernHeaderElseLegacy) {
  auto era = [](const Json& message, const McpHeaders& headers) {
    EraChoice choice = ChooseEra(mcp::ReadRequestFacts(message), headers);
    EXPECT_FALSE(choice.refusal.has_value()) << message.dump();
    return choice.era;
  };
  using mcp::Era;
  EXPECT_EQ(era(Request("tools/list", Modern()), Headers("2026-07-28")), Era::kModern);
  EXPECT_EQ(era(Request("tools/list", Modern()), Headers(std::nullopt)), Era::kModern);
  // A modern header alone makes it modern (the core then asks for the _meta: -32602).
  EXPECT_EQ(era(Request("server/discover"), Headers("2026-07-28")), Era::kModern);
  EXPECT_EQ(era(Request("server/discover"), Headers("v999.0.0")), Era::kModern);
  // Legacy: no claim, and a legacy or no version header.
  EXPECT_EQ(era(Request("tools/list"), Headers("2025-11-25")), Era::kLegacy);
  EXPECT_EQ(era(Request("ping"), Headers(std::nullopt)), Era::kLegacy);
  EXPECT_EQ(era(Request("ping"), Headers("1999-01-01")), Era::kLegacy);
  EXPECT_EQ(era(Request("initialize", {{"protocolVersion", "2025-11-25"}}), Headers(std::nullopt)),
            Era::kLegacy);
  EXPECT_EQ(era(Json{{"jsonrpc", "2.0"}, {"id", 1}, {"result", {}}}, Headers("2026-07-28")),
            Era::kLegacy);  // a posted response belongs to a legacy session
  // A modern initialize (with the _meta) is a modern request, which the core refuses: -32601.
  EXPECT_EQ(era(Request("initialize", Modern()), Headers("2026-07-28")), Era::kModern);
  // The only modern notification (cancelled) arrives without Mcp-Method from the v2 SDK.
  EXPECT_EQ(era(Json{{"jsonrpc", "2.0"},
                     {"method", "notifications/cancelled"},
                     {"params", Modern({{"requestId", "listen:0"}})}},
                Headers("2026-07-28")),
            Era::kModern);

  EraChoice legacy_handshake_modern_header =
      ChooseEra(mcp::ReadRequestFacts(Request("initialize", {{"protocolVersion", "2025-11-25"}})),
                Headers("2026-07-28"));
  ASSERT_TRUE(legacy_handshake_modern_header.refusal.has_value());
  EXPECT_EQ(legacy_handshake_modern_header.refusal->code, mcp::rpc_error::kHeaderMismatch);
}

TEST(CheckModernHeadersTest, HeadersMustMatchTheBody) {
  auto refusal = [](const Json& message, const McpHeaders& headers) {
    auto error = CheckModernHeaders(mcp::ReadRequestFacts(message), headers);
    if (error) {
      EXPECT_EQ(error->code, mcp::rpc_error::kHeaderMismatch);
    }
    return error ? error->message : std::string();
  };
  const Json call = Request("tools/call", Modern({{"name", "get_image"}}));
  EXPECT_EQ(refusal(call, Headers("2026-07-28", "tools/call", "get_image")), "");
  EXPECT_NE(refusal(call, Headers(std::nullopt, "tools/call", "get_image"))
                .find("MCP-Protocol-Version header is required"),
            std::string::npos);
  EXPECT_NE(refusal(Request("server/discover", Modern({}, "v999.0.0")),
                    Headers("2026-07-28", "server/discover"))
                .find("does not match the body's _meta version 'v999.0.0'"),
            std::string::npos);
  EXPECT_NE(refusal(call, Headers("2026-07-28")).find("Mcp-Method header is required"),
            std::string::npos);
  EXPECT_NE(refusal(Request("tools/list", Modern()), Headers("2026-07-28", "prompts/list"))
                .find("'prompts/list' does not match body value 'tools/list'"),
            std::string::npos);
  // Header values are case-sensitive.
  EXPECT_NE(refusal(Request("tools/list", Modern()), Headers("2026-07-28", "TOOLS/LIST")), "");
  EXPECT_NE(refusal(call, Headers("2026-07-28", "tools/call")).find("Mcp-Name header is required"),
            std::string::npos);
  EXPECT_NE(refusal(call, Headers("2026-07-28", "tools/call", "wrong_tool_name"))
                .find("'wrong_tool_name' does not match body value 'get_image'"),
            std::string::npos);
  // The Base64 sentinel is decoded before comparing (transports/streamable-http, Value Encoding).
  const Json read = Request("resources/read", Modern({{"uri", "imgmcp://sessions/é"}}));
  EXPECT_EQ(refusal(read, Headers("2026-07-28", "resources/read",
                                  "=?base64?aW1nbWNwOi8vc2Vzc2lvbnMvw6k=?=")),
            "");
  EXPECT_NE(refusal(read, Headers("2026-07-28", "resources/read", "=?base64?***?=")), "");
  // Methods without a name, and notifications, need no Mcp-Name / Mcp-Method.
  EXPECT_EQ(refusal(Request("tools/list", Modern()), Headers("2026-07-28", "tools/list")), "");
  EXPECT_EQ(refusal(Json{{"jsonrpc", "2.0"},
                         {"method", "notifications/cancelled"},
                         {"params", Modern({{"requestId", 1}})}},
                    Headers("2026-07-28")),
            "");
}

TEST(DecodeHeaderValueTest, SentinelOrPlain) {
  EXPECT_EQ(DecodeHeaderValue("us-west1"), "us-west1");
  EXPECT_EQ(DecodeHeaderValue("=?base64?SGVsbG8sIOS4lueVjA==?="), "Hello, 世界");
  EXPECT_EQ(DecodeHeaderValue("=?base64?"), "=?base64?");  // too short to be a sentinel
  EXPECT_FALSE(DecodeHeaderValue("=?base64?!!?=").has_value());
}

// transports/streamable-http "Value Encoding", and the examples of its table.
TEST(DecodeHeaderValueTest, SentinelBase64IsCanonicalAndPlainValuesHeaderSafe) {
  EXPECT_EQ(DecodeHeaderValue("=?base64?IHBhZGRlZCA=?="), " padded ");
  EXPECT_EQ(DecodeHeaderValue("=?base64?bGluZTEKbGluZTI=?="), "line1\nline2");
  EXPECT_EQ(DecodeHeaderValue("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="), "=?base64?literal?=");
  EXPECT_EQ(DecodeHeaderValue("=?base64??="), "");
  // Padding is required, and only at the end; the URL-safe alphabet is not Base64 here.
  EXPECT_FALSE(DecodeHeaderValue("=?base64?SGVsbG8?=").has_value());
  EXPECT_FALSE(DecodeHeaderValue("=?base64?SGVsbG8==?=").has_value());
  EXPECT_FALSE(DecodeHeaderValue("=?base64?SGVs!!!bG8=?=").has_value());
  EXPECT_FALSE(DecodeHeaderValue("=?base64?SG=sbG8=?=").has_value());
  EXPECT_FALSE(DecodeHeaderValue("=?base64?-_-_?=").has_value());
  // The markers are case-sensitive: anything else is a plain value.
  EXPECT_EQ(DecodeHeaderValue("=?BASE64?SGVsbG8=?="), "=?BASE64?SGVsbG8=?=");
  EXPECT_EQ(DecodeHeaderValue("=?base64?SGVsbG8="), "=?base64?SGVsbG8=");
  EXPECT_EQ(DecodeHeaderValue("SGVsbG8="), "SGVsbG8=");
  EXPECT_EQ(DecodeHeaderValue("a b\tc"), "a b\tc");
  // A plain value is visible ASCII, spaces and tabs only.
  EXPECT_FALSE(DecodeHeaderValue("caf\xc3\xa9").has_value());
  EXPECT_FALSE(DecodeHeaderValue("a\x7f").has_value());
}

TEST(ParamHeadersOfTest, AnnotationsReachedThroughPropertiesOnly) {
  const Json schema = Json::parse(R"({
    "type": "object",
    "properties": {
      "session_id": {"type": "string", "x-mcp-header": "Session-Id"},
      "prompt": {"type": "string"},
      "place": {"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "priority": {"type": "integer", "x-mcp-header": "Priority"}}},
      "tags": {"type": "array", "items": {"type": "string", "x-mcp-header": "Tag"}},
      "either": {"anyOf": [{"type": "string", "x-mcp-header": "Either"}]}
    }})");
  const std::vector<ParamHeader> declared = ParamHeadersOf(schema);
  std::vector<std::string> names;
  for (const ParamHeader& p : declared) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"Priority", "Region", "Session-Id"}));
  EXPECT_EQ(declared[0].path, (std::vector<std::string>{"place", "priority"}));
  EXPECT_EQ(declared[0].type, "integer");
  EXPECT_EQ(declared[2].path, (std::vector<std::string>{"session_id"}));
  EXPECT_TRUE(ParamHeadersOf(Json::parse(R"({"type": "object"})")).empty());
}

// The request head of a POST with these extra header lines.
RequestHeaders HeadWith(std::string* storage, const std::string& lines) {
  *storage = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + lines + "\r\n";
  return RequestHeaders::Parse(*storage);
}

// The message of CheckParamHeaders' refusal ("" when it accepts), which must be a -32020.
std::string ParamRefusal(const Json& arguments, const std::string& lines, bool required) {
  static const std::vector<ParamHeader> kDeclared = {{{"session_id"}, "Session-Id", "string"},
                                                     {{"count"}, "Count", "integer"}};
  std::string storage;
  const RequestHeaders headers = HeadWith(&storage, lines);
  auto error = CheckParamHeaders(kDeclared, arguments, headers, required);
  if (!error) return "";
  EXPECT_EQ(error->code, mcp::rpc_error::kHeaderMismatch);
  return error->message;
}

TEST(CheckParamHeadersTest, HeaderAndArgumentComeTogetherAndAgree) {
  const Json args = {{"session_id", "s1"}};
  EXPECT_EQ(ParamRefusal(args, "Mcp-Param-Session-Id: s1\r\n", true), "");
  EXPECT_EQ(ParamRefusal(args, "mcp-param-session-id:  s1 \r\n", true), "");  // any case, OWS
  EXPECT_EQ(ParamRefusal(args, "Mcp-Param-Session-Id: =?base64?czE=?=\r\n", true), "");
  EXPECT_EQ(ParamRefusal(Json::object(), "", true), "");
  EXPECT_EQ(ParamRefusal({{"session_id", nullptr}}, "", true), "");  // null: no value
  // A header the tool does not declare is not checked.
  EXPECT_EQ(ParamRefusal(args, "Mcp-Param-Session-Id: s1\r\nMcp-Param-Other: x\r\n", true), "");

  EXPECT_EQ(ParamRefusal(args, "Mcp-Param-Session-Id: s2\r\n", true),
            "Header mismatch: Mcp-Param-Session-Id header value 's2' does not match body value "
            "'s1' (arguments.session_id)");
  EXPECT_EQ(ParamRefusal(args, "Mcp-Param-Session-Id: S1\r\n", false).empty(), false);
  EXPECT_NE(ParamRefusal(args, "", true).find("the Mcp-Param-Session-Id header is required"),
            std::string::npos);
  EXPECT_NE(ParamRefusal(Json::object(), "Mcp-Param-Session-Id: s1\r\n", true)
                .find("the body has no arguments.session_id"),
            std::string::npos);
  EXPECT_NE(ParamRefusal(args, "Mcp-Param-Session-Id: =?base64?czE?=\r\n", true)
                .find("has an invalid value"),
            std::string::npos);
  EXPECT_NE(ParamRefusal(args, "Mcp-Param-Session-Id: s1\r\nMcp-Param-Session-Id: s1\r\n", true)
                .find("more than one Mcp-Param-Session-Id header"),
            std::string::npos);
}

TEST(CheckParamHeadersTest, LegacyRequestsMayOmitTheHeaderButNotContradictIt) {
  const Json args = {{"session_id", "s1"}};
  EXPECT_EQ(ParamRefusal(args, "", false), "");
  EXPECT_NE(ParamRefusal(args, "Mcp-Param-Session-Id: s2\r\n", false), "");
  EXPECT_NE(ParamRefusal(Json::object(), "Mcp-Param-Session-Id: s1\r\n", false), "");
}

TEST(CheckParamHeadersTest, IntegersCompareAsNumbers) {
  EXPECT_EQ(ParamRefusal({{"count", 42}}, "Mcp-Param-Count: 42\r\n", true), "");
  EXPECT_EQ(ParamRefusal({{"count", 42}}, "Mcp-Param-Count: 42.0\r\n", true), "");
  EXPECT_NE(ParamRefusal({{"count", 42}}, "Mcp-Param-Count: 43\r\n", true), "");
  EXPECT_NE(ParamRefusal({{"count", 42}}, "Mcp-Param-Count: 4e1\r\n", true), "");
  EXPECT_NE(ParamRefusal({{"count", 42}}, "", true), "");
}

TEST(ModernErrorStatusTest, LadderErrorsAre4xxHandlerErrorsAre200) {
  EXPECT_EQ(ModernErrorStatus(mcp::rpc_error::kMethodNotFound, true), 404);
  EXPECT_EQ(ModernErrorStatus(mcp::rpc_error::kInvalidParams, true), 400);  // the _meta
  EXPECT_EQ(ModernErrorStatus(mcp::rpc_error::kUnsupportedProtocolVersion, true), 400);
  EXPECT_EQ(ModernErrorStatus(mcp::rpc_error::kHeaderMismatch, true), 400);
  EXPECT_EQ(ModernErrorStatus(mcp::rpc_error::kMissingClientCapability, false), 400);
  EXPECT_EQ(ModernErrorStatus(mcp::rpc_error::kInvalidParams, false), 200);  // unknown tool
  EXPECT_EQ(ModernErrorStatus(mcp::rpc_error::kInternalError, false), 200);
}

}  // namespace
}  // namespace imgmcp::http
