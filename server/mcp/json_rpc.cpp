#include "server/mcp/json_rpc.h"

#include <cstring>
#include <utility>
#include <vector>

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

Json MakeErrorResponse(const Json& id, const RpcError& error) {
  Json err = Json::object();
  err["code"] = error.code;
  err["message"] = error.message;
  if (error.data) err["data"] = *error.data;
  Json msg = Envelope();
  msg["id"] = id;
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

std::string IdKey(const Json& id) { return id.dump(); }

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
    parsed.error = RpcError{rpc_error::kParseError, "Parse error: a raw NUL byte is not valid JSON",
                            std::nullopt};
    return parsed;
  }
  if (TextNestsDeeperThan(text, kMaxJsonNestingDepth)) {  // before the parser builds it
    parsed.error =
        RpcError{rpc_error::kInvalidRequest, "Invalid Request: " + TooDeepMessage(), std::nullopt};
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
    parsed.error = RpcError{rpc_error::kParseError, "Parse error: invalid JSON", std::nullopt};
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

RpcError ToRpcError(const Error& error) {
  switch (error.code) {
    case ErrorCode::kInvalidArgument:
      return {rpc_error::kInvalidParams, error.message, std::nullopt};
    case ErrorCode::kNotFound:
      return {rpc_error::kResourceNotFound, error.message, std::nullopt};
    default:
      return {rpc_error::kInternalError, error.message, std::nullopt};
  }
}

}  // namespace imgmcp::mcp
