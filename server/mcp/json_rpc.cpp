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
