// JSON-RPC 2.0 vocabulary for the MCP core: error codes, message builders and request ids.
// Wire-format names ("jsonrpc", "result", "error") live here and in connection.cpp only.
#pragma once

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

// Maps an imgmcp Error to the JSON-RPC error a request handler answers with.
RpcError ToRpcError(const Error& error);

}  // namespace imgmcp::mcp
