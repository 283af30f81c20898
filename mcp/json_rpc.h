// JSON-RPC 2.0 for the MCP core: error codes and the one Error → JSON-RPC error mapping, reading
// an incoming message into a typed one, building outgoing messages, request ids. The envelope's
// wire names ("jsonrpc", "id", "method", "params", "result", "error") live here only.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/json.h"
#include "common/result.h"
#include "mcp/protocol_version.h"

namespace imgmcp::mcp {

// Standard JSON-RPC codes plus the MCP-specific ones (2025-11-25 basic/index and 2026-07-28
// basic/versioning).
namespace rpc_error {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kResourceNotFound = -32002;  // legacy; modern uses kInvalidParams
inline constexpr int kHeaderMismatch = -32020;
inline constexpr int kMissingClientCapability = -32021;
inline constexpr int kUnsupportedProtocolVersion = -32022;
// imgmcp's: a per-person limit refused the call (call_limiter.h); data names the limit and
// retryAfterSeconds. Over HTTP: 429 with Retry-After.
inline constexpr int kTooManyRequests = -32029;
}  // namespace rpc_error

// A JSON-RPC error as the core produces it before it becomes a response object.
struct RpcError {
  int code = rpc_error::kInternalError;
  std::string message;
  std::optional<Json> data;
  // Raised while checking the request itself (its envelope, version, method), before any
  // handler ran; Streamable HTTP answers such errors of modern requests with a 4xx status.
  bool before_dispatch = false;
};

// The errors the core raises, each with its code and wording in one place.
RpcError ParseError(std::string detail);
RpcError InvalidRequest(std::string detail);  // "Invalid Request: <detail>"
RpcError MethodNotFound(std::string_view method);
RpcError InvalidParams(std::string message);
RpcError InternalError(std::string message);
RpcError HeaderMismatch(std::string detail);
// "Unsupported protocol version: <requested> (supported: …)", the one wording of that refusal:
// the versions `era` admits are listed — every version imgmcp speaks for a modern request's _meta
// (the -32022 error below), the versions initialize negotiates for a legacy session's
// MCP-Protocol-Version header (which the HTTP transport refuses with its own status and code).
std::string UnsupportedVersionText(std::string_view requested, Era era);
RpcError UnsupportedProtocolVersion(std::string_view requested);  // -32022, data.supported
// A request whose id belongs to a request of the same connection still in progress (-32600).
RpcError DuplicateRequestIdError(const Json& id);
RpcError MissingClientCapability(const Json& required);  // {"sampling":{}, …}
// A call refused by a per-person limit: kTooManyRequests with data {limit, retryAfterSeconds}.
RpcError TooManyRequests(const std::string& message, const std::string& limit,
                         int retry_after_seconds);
// resources/read of a URI nobody serves: -32002 in the legacy era, -32602 in the modern one;
// both carry data.uri.
// The wire error for a resource no provider has (from ResourceNotFoundError or any kNotFound of
// resources/read): -32002 in the legacy era, -32602 in the modern one, with data.uri.
RpcError ResourceNotFound(const std::string& uri, bool modern);
// A client-sent text quoted in an error message: at most kMaxQuoted bytes (cut at a UTF-8
// character boundary, "…" added), so an error never echoes a huge value back.
inline constexpr size_t kMaxQuoted = 200;
std::string Quoted(std::string_view text);

// Maps an imgmcp Error (from a handler, a registry or a provider) to the JSON-RPC error a request
// is answered with: invalid arguments and unknown names are the caller's (-32602), everything
// else is internal (-32603).
RpcError ToRpcError(const Error& error);

// One incoming message (a batch's element, or the whole message), read into typed fields.
struct IncomingMessage {
  enum class Kind { kRequest, kNotification, kResponse, kInvalid };
  Kind kind = Kind::kInvalid;
  Json id;             // the request's (or response's) id; null when absent or unreadable
  std::string method;  // requests and notifications
  Json params;         // an object (empty when absent); requests and notifications
  // kInvalid: the error to answer with (to `id`). kRequest: set when params is not an object.
  std::optional<RpcError> error;
  // kResponse: the client's answer to one of our requests.
  std::optional<Json> result;
  std::optional<Json> response_error;
};
// `message` is moved from. A response without a readable id or "jsonrpc":"2.0" is kInvalid with
// no error (it is dropped unanswered, like any stray response).
IncomingMessage ReadIncoming(Json message);
// The same without taking `message` apart: `params` stays empty and *params points at the params
// object inside `message` (nullptr when there is none).
IncomingMessage PeekIncoming(const Json& message, const Json** params);

// Whether a parsed message is a batch (a JSON array of messages).
inline bool IsBatch(const Json& message) { return message.is_array(); }
// The id of a message that could not be read otherwise (for an error answering it), else null.
Json ReadableId(const Json& message);

// {"jsonrpc":"2.0","id":id,"result":result}. `result` is moved, never copied (tool results can
// carry tens of MB of base64).
Json MakeResult(const Json& id, Json result);
// {"jsonrpc":"2.0","id":id,"error":{code,message,data?}}; id is null when it could not be read —
// or, with `omit_null_id` (the modern era's schema), left out.
Json MakeErrorResponse(const Json& id, const RpcError& error, bool omit_null_id = false);
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
  Json message;  // valid when error is empty
  std::optional<RpcError> error;
};
ParsedMessage ParseMessageText(std::string_view text);
std::string TooDeepMessage();
// The same for a parsed value (iterative: safe on any depth).
bool NestsDeeperThan(const Json& value, size_t limit);

// The compact JSON text of an error response (for transports that answer before a message
// reaches the core: a body that is not JSON, a refused header, a missing session).
std::string ErrorResponseText(const Json& id, const RpcError& error, bool omit_null_id = false);
// The members of a client's error answer (to a server→client request), as one line of text.
std::string DescribeClientError(const Json& response_error);

}  // namespace imgmcp::mcp
