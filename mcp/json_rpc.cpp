#include "mcp/json_rpc.h"

#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "mcp/json_writer.h"

namespace imgmcp::mcp {

namespace {
Json Envelope() {
  Json msg = Json::object();
  msg["jsonrpc"] = "2.0";
  return msg;
}

// The value of 4 hex digits at p (p has at least 4 characters), or -1.
int Hex4(const char* p) {
  int v = 0;
  for (int i = 0; i < 4; ++i) {
    const char c = p[i];
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

// `text` with every unpaired UTF-16 surrogate escape (a backslash-u escape of U+D800..U+DFFF
// without its other half) replaced by the escape of U+FFFD, which has the same length; nullopt when
// there is none. JSON.stringify emits such escapes for a string cut inside an emoji; they are valid
// JSON text but cannot be UTF-8, so the parser refuses them.
std::optional<std::string> ReplaceLoneSurrogateEscapes(std::string_view text) {
  std::optional<std::string> fixed;
  auto replace = [&](size_t at) {
    if (!fixed) fixed = std::string(text);
    fixed->replace(at, 6, "\\uFFFD");
  };
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '\\') continue;
    if (text[i + 1] != 'u' || i + 6 > text.size()) {
      ++i;  // an escaped character: never the start of an escape itself
      continue;
    }
    const int unit = Hex4(text.data() + i + 2);
    if (unit >= 0xD800 && unit <= 0xDBFF) {
      const bool paired = i + 12 <= text.size() && text[i + 6] == '\\' && text[i + 7] == 'u' &&
                          Hex4(text.data() + i + 8) >= 0xDC00 &&
                          Hex4(text.data() + i + 8) <= 0xDFFF;
      if (paired) {
        i += 11;
        continue;
      }
      replace(i);
    } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
      replace(i);  // a low half with no high half before it (pairs are skipped whole above)
    }
    i += 5;
  }
  return fixed;
}
}  // namespace

Json MakeResult(const Json& id, Json result) {
  Json msg = Envelope();
  msg["id"] = id;
  msg["result"] = std::move(result);
  return msg;
}

Json MakeErrorResponse(const Json& id, const RpcError& error, bool omit_null_id) {
  Json err = Json::object();
  err["code"] = error.code;
  err["message"] = error.message;
  if (error.data) err["data"] = *error.data;
  Json msg = Envelope();
  if (!id.is_null() || !omit_null_id) msg["id"] = id;
  msg["error"] = std::move(err);
  return msg;
}

Json MakeNotification(std::string_view method, Json params) {
  Json msg = Envelope();
  msg["method"] = method;
  msg["params"] = std::move(params);
  return msg;
}

Json MakeRequest(const Json& id, std::string_view method, Json params) {
  Json msg = Envelope();
  msg["id"] = id;
  msg["method"] = method;
  msg["params"] = std::move(params);
  return msg;
}

bool IsValidId(const Json& id) {
  return id.is_string() || id.is_number_integer();  // number_integer covers unsigned too
}

std::string IdKey(const Json& id) {
  std::string key;  // an integer id fits the string's inline buffer: no allocation
  AppendCompactJson(id, key);
  return key;
}

bool TextNestsDeeperThan(std::string_view text, size_t limit) {
  size_t depth = 0;
  const char* p = text.data();
  const char* const end = p + text.size();
  while (p < end) {
    const char c = *p++;
    if (c == '\0') return false;  // where the JSON parser stops reading, so do we
    if (c == '"') {
      // Skip to the closing quote: the next '"' preceded by an even number of backslashes. memchr
      // keeps multi-megabyte base64 strings cheap.
      while (p < end) {
        const void* hit = std::memchr(p, '"', static_cast<size_t>(end - p));
        if (hit == nullptr) return false;  // unterminated: the parser will say so
        const char* quote = static_cast<const char*>(hit);
        size_t backslashes = 0;
        for (const char* b = quote; b > p && b[-1] == '\\'; --b) ++backslashes;
        p = quote + 1;
        if (backslashes % 2 == 0) break;
      }
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

std::string TooDeepMessage() {
  return "the message nests deeper than " + std::to_string(kMaxJsonNestingDepth) +
         " levels of arrays/objects";
}

ParsedMessage ParseMessageText(std::string_view text) {
  ParsedMessage parsed;
  // A raw NUL is never valid JSON text, and the parser would take it for the end of input,
  // accepting the prefix and dropping the rest.
  if (text.find('\0') != std::string_view::npos) {
    parsed.error = ParseError("a raw NUL byte is not valid JSON");
    return parsed;
  }
  if (TextNestsDeeperThan(text, kMaxJsonNestingDepth)) {  // before the parser builds it
    parsed.error = InvalidRequest(TooDeepMessage());
    return parsed;
  }
  parsed.message = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.message.is_discarded()) {
    // Only when parsing failed: the common case pays nothing for this scan.
    if (auto fixed = ReplaceLoneSurrogateEscapes(text)) {
      parsed.message = Json::parse(*fixed, nullptr, /*allow_exceptions=*/false);
    }
  }
  if (parsed.message.is_discarded()) {
    parsed.error = ParseError("invalid JSON");
  }
  return parsed;
}

bool NestsDeeperThan(const Json& value, size_t limit) {
  std::vector<std::pair<const Json*, size_t>> stack = {{&value, 0}};
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    if (!node->is_structured()) continue;
    if (depth + 1 > limit) return true;
    for (const Json& child : *node) stack.emplace_back(&child, depth + 1);
  }
  return false;
}

RpcError ParseError(std::string detail) {
  return {rpc_error::kParseError, "Parse error: " + std::move(detail), std::nullopt, true};
}

RpcError InvalidRequest(std::string detail) {
  return {rpc_error::kInvalidRequest, "Invalid Request: " + std::move(detail), std::nullopt, true};
}

RpcError MethodNotFound(std::string_view method) {
  return {rpc_error::kMethodNotFound, "Method not found: " + std::string(method), std::nullopt,
          true};
}

RpcError InvalidParams(std::string message) {
  return {rpc_error::kInvalidParams, std::move(message), std::nullopt, false};
}

RpcError InternalError(std::string message) {
  return {rpc_error::kInternalError, std::move(message), std::nullopt, false};
}

RpcError HeaderMismatch(std::string detail) {
  return {rpc_error::kHeaderMismatch, "Header mismatch: " + std::move(detail), std::nullopt, true};
}

namespace {
// "a, b, c"
template <size_t N>
std::string VersionList(const std::array<std::string_view, N>& versions) {
  std::string list;
  for (std::string_view v : versions) list.append(list.empty() ? "" : ", ").append(v);
  return list;
}
}  // namespace

std::string UnsupportedVersionText(std::string_view requested, Era era) {
  return "Unsupported protocol version: " + std::string(requested) + " (supported: " +
         (era == Era::kModern ? VersionList(kAllProtocolVersions)
                              : VersionList(kSupportedProtocolVersions)) +
         ")";
}

RpcError UnsupportedProtocolVersion(std::string_view requested) {
  Json supported = Json::array();
  for (std::string_view v : kAllProtocolVersions) supported.push_back(v);
  Json data = Json::object();
  data["supported"] = std::move(supported);
  data["requested"] = requested;
  return {rpc_error::kUnsupportedProtocolVersion, UnsupportedVersionText(requested, Era::kModern),
          std::move(data), true};
}

RpcError DuplicateRequestIdError(const Json& id) {
  return InvalidRequest("duplicate request id " + IdKey(id) + " is still in progress");
}

RpcError TooManyRequests(const std::string& message, const std::string& limit,
                         int retry_after_seconds) {
  return {rpc_error::kTooManyRequests, message,
          Json{{"limit", limit}, {"retryAfterSeconds", retry_after_seconds}}};
}

RpcError MissingClientCapability(const Json& required) {
  std::string names;
  for (const auto& [name, value] : required.items()) names += (names.empty() ? "" : ", ") + name;
  Json data = Json::object();
  data["requiredCapabilities"] = required;
  return {rpc_error::kMissingClientCapability,
          "Missing required client capability: " + names +
              " (declare it in "
              "_meta[\"io.modelcontextprotocol/clientCapabilities\"])",
          std::move(data), false};
}

std::string Quoted(std::string_view text) {
  if (text.size() <= kMaxQuoted) return std::string(text);
  size_t end = kMaxQuoted;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end)) + "…";
}

RpcError ResourceNotFound(const std::string& uri, bool modern) {
  Json data = Json::object();
  data["uri"] = Quoted(uri);
  // The URI is quoted once, in data (as the specification's example has it): a client's long URI
  // is not echoed twice.
  return {modern ? rpc_error::kInvalidParams : rpc_error::kResourceNotFound, "Resource not found",
          std::move(data), false};
}

RpcError ToRpcError(const Error& error) {
  switch (error.code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kNotFound:
      return InvalidParams(error.message);
    default:
      return InternalError(error.message);
  }
}

Json ReadableId(const Json& message) {
  if (!message.is_object()) return nullptr;
  auto it = message.find("id");
  return it != message.end() && IsValidId(*it) ? *it : Json(nullptr);
}

namespace {

// Reads `message` into `in`, all but its params and response payload; returns where the params
// object is in `message` (nullptr when absent, null or not an object).
const Json* ReadShape(const Json& message, IncomingMessage& in) {
  if (!message.is_object()) {
    in.error = InvalidRequest("a message must be a JSON object");
    return nullptr;
  }
  const auto id_it = message.find("id");
  const bool has_id = id_it != message.end();
  if (has_id && IsValidId(*id_it)) in.id = *id_it;
  const auto version_it = message.find("jsonrpc");
  const bool version_ok = version_it != message.end() && *version_it == "2.0";
  const auto method_it = message.find("method");
  if (method_it == message.end()) {
    if (message.contains("result") || message.contains("error")) {
      // Without "jsonrpc":"2.0" or a readable id it is a stray message: dropped, never answered.
      if (version_ok && !in.id.is_null()) in.kind = IncomingMessage::Kind::kResponse;
      return nullptr;
    }
    in.error = InvalidRequest("missing \"method\"");
    return nullptr;
  }
  if (!version_ok) {
    in.error = InvalidRequest("\"jsonrpc\" must be \"2.0\"");
    return nullptr;
  }
  if (!method_it->is_string()) {
    in.error = InvalidRequest("\"method\" must be a string");
    return nullptr;
  }
  in.method = method_it->get<std::string>();
  in.params = Json::object();
  const Json* params = nullptr;
  bool params_ok = true;
  if (auto p = message.find("params"); p != message.end() && !p->is_null()) {
    params_ok = p->is_object();
    if (params_ok) params = &*p;
  }
  if (!has_id) {
    in.kind = IncomingMessage::Kind::kNotification;
    if (!params_ok) in.error = InvalidParams("params must be an object");
    return params;
  }
  if (in.id.is_null()) {
    in.error = InvalidRequest("\"id\" must be a string or an integer");
    return nullptr;
  }
  in.kind = IncomingMessage::Kind::kRequest;
  if (!params_ok) in.error = InvalidParams("params must be an object");
  return params;
}

}  // namespace

IncomingMessage ReadIncoming(Json message) {
  IncomingMessage in;
  const Json* params = ReadShape(message, in);
  if (params != nullptr) in.params = std::move(message["params"]);
  if (in.kind == IncomingMessage::Kind::kResponse) {
    if (auto result = message.find("result"); result != message.end()) {
      in.result = std::move(*result);
    } else {
      in.response_error = std::move(message["error"]);
    }
  }
  return in;
}

IncomingMessage PeekIncoming(const Json& message, const Json** params) {
  IncomingMessage in;
  *params = ReadShape(message, in);
  return in;
}

std::string ErrorResponseText(const Json& id, const RpcError& error, bool omit_null_id) {
  return DumpCompactJson(MakeErrorResponse(id, error, omit_null_id));
}

std::string DescribeClientError(const Json& response_error) {
  std::string text = "client answered with an error";
  if (response_error.is_object()) {
    if (auto code = response_error.find("code"); code != response_error.end()) {
      text += " " + code->dump();
    }
    if (auto m = response_error.find("message"); m != response_error.end()) {
      text += ": " + (m->is_string() ? m->get<std::string>() : m->dump());
    }
  }
  return text;
}

}  // namespace imgmcp::mcp
