// JSON-RPC 2.0 vocabulary for the MCP core: error codes, message builders and request ids.
// Wire-format names ("jsonrpc", "result", "error") live here and in connection.cpp only.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/json.h"
#include "common/result.h"

namespace imgmcp::mcp {

// Standard JSON-RPC codes plus the MCP-specific ones (reference doc §2).
namespace rpc_error {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kResourceNotFound = -32002;
}  // namespace rpc_error

// A JSON-RPC error as the core produces it before it becomes a response object.
struct RpcError {
  int code = rpc_error::kInternalError;
  std::string message;
  std::optional<Json> data;
};

// {"jsonrpc":"2.0","id":id,"result":result}. `result` is moved, never copied (tool results can
// carry tens of MB of base64).
Json MakeResult(const Json& id, Json result);
// {"jsonrpc":"2.0","id":id,"error":{code,message,data?}}; id is null when it could not be read.
Json MakeErrorResponse(const Json& id, const RpcError& error);
Json MakeNotification(std::string_view method, Json params);
Json MakeRequest(const Json& id, std::string_view method, Json params);

// True for the id types JSON-RPC allows in a request: string or integer (never null or float).
bool IsValidId(const Json& id);
// A map key that distinguishes 1 from "1" (the compact dump of the id).
std::string IdKey(const Json& id);

// Messages nested deeper than this many arrays/objects are refused (-32600) before they are walked:
// copying, comparing or dumping a JSON value recurses once per level, and a 64 MiB line of "["
// would also build a DOM of several GB. Real MCP messages nest a dozen levels at most.
inline constexpr size_t kMaxJsonNestingDepth = 128;

// True when the JSON text opens more than `limit` arrays/objects at once (strings are skipped, so
// brackets inside them do not count). A cheap scan to run before parsing; the text need not be
// valid JSON. Like the parser, it stops at a raw NUL byte.
bool TextNestsDeeperThan(std::string_view text, size_t limit);

// Parses one incoming message's text for any transport: a raw NUL byte or invalid JSON is a parse
// error (-32700), nesting deeper than kMaxJsonNestingDepth an invalid request (-32600), checked
// before the parser builds anything.
struct ParsedMessage {
  Json message;                  // valid when error is empty
  std::optional<RpcError> error;
};
ParsedMessage ParseMessageText(std::string_view text);
std::string TooDeepMessage();
// The same for a parsed value (iterative: safe on any depth).
bool NestsDeeperThan(const Json& value, size_t limit);

// Maps an imgmcp Error to the JSON-RPC error a request handler answers with.
RpcError ToRpcError(const Error& error);

}  // namespace imgmcp::mcp
