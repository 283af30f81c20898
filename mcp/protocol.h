// MCP's JSON conversion for the core: method names, the typed params of every method (each with a
// strict FromJson that names the failing field), the modern per-request _meta envelope, and the
// JSON of results and notifications in both eras. Together with json_rpc.h (the envelope) and
// tool_registry.h (tool definitions and results) this is where MCP's wire names live; the rest
// of the core works on the typed values.
//
// Protocol params are strict about what they read (presence, types, allowed values) and ignore
// members they do not know: MCP grows by adding members, and a client of a later revision must
// not be refused for them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/result.h"
#include "mcp/json_rpc.h"
#include "mcp/protocol_version.h"
#include "mcp/tool.h"

namespace imgmcp::mcp {

// Method names of the requests and notifications the core knows.
namespace methods {
inline constexpr char kInitialize[] = "initialize";
inline constexpr char kPing[] = "ping";
inline constexpr char kDiscover[] = "server/discover";
inline constexpr char kListen[] = "subscriptions/listen";
inline constexpr char kToolsList[] = "tools/list";
inline constexpr char kToolsCall[] = "tools/call";
inline constexpr char kResourcesList[] = "resources/list";
inline constexpr char kResourceTemplatesList[] = "resources/templates/list";
inline constexpr char kResourcesRead[] = "resources/read";
inline constexpr char kResourcesSubscribe[] = "resources/subscribe";
inline constexpr char kResourcesUnsubscribe[] = "resources/unsubscribe";
inline constexpr char kPromptsList[] = "prompts/list";
inline constexpr char kPromptsGet[] = "prompts/get";
inline constexpr char kComplete[] = "completion/complete";
inline constexpr char kSetLevel[] = "logging/setLevel";
inline constexpr char kInitialized[] = "notifications/initialized";
inline constexpr char kCancelled[] = "notifications/cancelled";
inline constexpr char kProgress[] = "notifications/progress";
inline constexpr char kMessage[] = "notifications/message";
inline constexpr char kResourceUpdated[] = "notifications/resources/updated";
inline constexpr char kResourceListChanged[] = "notifications/resources/list_changed";
inline constexpr char kToolListChanged[] = "notifications/tools/list_changed";
inline constexpr char kPromptListChanged[] = "notifications/prompts/list_changed";
inline constexpr char kSubscriptionAcknowledged[] = "notifications/subscriptions/acknowledged";
}  // namespace methods

// --- the modern per-request envelope (params._meta) ---------------------------------------------

// True when params._meta names a protocol version: the request claims the modern era
// (basic/versioning: "a request carrying modern per-request _meta is served statelessly").
bool HasEnvelopeClaim(const Json& params);
// params._meta's protocol version when it is a string.
std::optional<std::string> ClaimedVersion(const Json& params);

struct ModernEnvelope {
  std::string protocol_version;
  Json client_capabilities = Json::object();
  std::optional<Json> client_info;
  std::optional<LogLevel> log_level;  // absent: the request gets no notifications/message
};
// Reads params._meta of a modern request: protocolVersion (a string) and clientCapabilities (an
// object) are required, clientInfo is an object when present, logLevel a level name when present
// (-32602 naming the key); a version imgmcp does not speak is -32022. The error is the answer.
std::optional<RpcError> ReadModernEnvelope(const Json& params, ModernEnvelope* out);

// params._meta.progressToken when it is a string or an integer (both eras).
std::optional<Json> ReadProgressToken(const Json& params);

// params._meta.traceparent when it is a valid W3C traceparent (common/trace_context.h), else ""
// (an invalid one is ignored, as the specification asks).
std::string ReadTraceParent(const Json& params);

// --- typed params -------------------------------------------------------------------------------
// FromJson(params, method): `method` names the request in error messages, e.g. "tools/call needs
// params.name (string)".

struct NoParams {
  static Result<NoParams> FromJson(const Json& params, std::string_view method);
};

struct InitializeParams {
  std::string protocol_version;
  Json capabilities = Json::object();
  Json client_info;  // null when absent
  static Result<InitializeParams> FromJson(const Json& params, std::string_view method);
};

struct SetLevelParams {
  LogLevel level = LogLevel::kInfo;
  static Result<SetLevelParams> FromJson(const Json& params, std::string_view method);
};

struct ListParams {
  std::optional<std::string> cursor;
  static Result<ListParams> FromJson(const Json& params, std::string_view method);
};

// resources/read, resources/subscribe, resources/unsubscribe.
struct UriParams {
  std::string uri;
  static Result<UriParams> FromJson(const Json& params, std::string_view method);
};

// tools/call and prompts/get: a name, its arguments, and the inputs of an MRTR retry.
struct InvokeParams {
  std::string name;
  Json arguments = Json::object();
  InputResponses inputs;  // inputResponses, requestState (MRTR)
  // tools/call of a 2025-11-25 session: params.task, as received (legacy_task_json.h reads it
  // where it applies; other eras and versions ignore it).
  std::optional<Json> task;
  static Result<InvokeParams> FromJson(const Json& params, std::string_view method);
};
using CallToolParams = InvokeParams;
using GetPromptParams = InvokeParams;

// completion/complete: the completion handler reads ref/argument/context itself.
struct CompleteParams {
  Json request;  // the whole params object
  static Result<CompleteParams> FromJson(const Json& params, std::string_view method);
};

// subscriptions/listen's notification filter.
struct ListenFilter {
  bool tools_list_changed = false;
  bool prompts_list_changed = false;
  bool resources_list_changed = false;
  std::vector<std::string> resource_subscriptions;
  std::vector<std::string> task_ids;  // notifications/tasks (the tasks extension)
};
struct ListenParams {
  ListenFilter filter;
  static Result<ListenParams> FromJson(const Json& params, std::string_view method);
};

struct CancelledParams {
  Json request_id;  // string or integer
  std::optional<std::string> reason;
  static Result<CancelledParams> FromJson(const Json& params, std::string_view method);
};

// --- results
// --------------------------------------------------------------------------------------

struct ServerIdentity {
  std::string name;
  std::string title;  // omitted when empty
  std::string version;
};

struct ServerCapabilities {
  bool tools_list_changed = false;
  bool resources_subscribe = true;  // legacy resources/subscribe; modern subscriptions/listen
  bool resources_list_changed = true;
  bool prompts = false;
  bool prompts_list_changed = false;
  bool completions = false;
};
Json CapabilitiesJson(const ServerCapabilities& capabilities);

Json InitializeResult(const std::string& version, const ServerCapabilities& capabilities,
                      const ServerIdentity& server, const std::string& instructions);
// server/discover: every version imgmcp speaks (kAllProtocolVersions).
Json DiscoverResult(const ServerCapabilities& capabilities, const ServerIdentity& server,
                    const std::string& instructions);
Json EmptyResult();
// {<key>: items, nextCursor?} for tools/list ("tools"), prompts/list ("prompts"),
// resources/list ("resources").
Json ListResult(const char* key, Json items, const std::optional<std::string>& next_cursor);
Json ResourceTemplatesResult(Json templates);
Json CompletionResult(Json completion);

// A modern result's caching hints (server/utilities/caching).
struct CachePolicy {
  int64_t ttl_ms = 0;
  bool public_scope = false;  // "public" (same for every caller) or "private"
};
// What a modern result carries beyond its payload: resultType "complete" (unless the result is
// already input_required), the caching hints of cacheable methods, and the server's identity in
// _meta (basic/index: servers SHOULD identify themselves on each result).
void DecorateModernResult(Json& result, const std::optional<CachePolicy>& cache,
                          const ServerIdentity& server);
// What an MRTR requestState is bound to: the method and the tool's or prompt's name.
std::string StateScope(std::string_view method, std::string_view name);
// The client capability a server→client request needs: "sampling" (sampling/createMessage),
// "elicitation" (elicitation/create), "roots" (roots/list); "" for any other method.
std::string ClientCapabilityFor(std::string_view method);
// A result asking the client for more input (MRTR): resultType "input_required", the requests
// (an object keyed by the server's names) and the opaque state to echo.
Json InputRequiredResult(Json input_requests, const std::optional<std::string>& request_state);
// The result ending a subscriptions/listen stream gracefully.
Json ListenEndResult(const Json& subscription_id);

// --- notification params -----------------------------------------------------------------------

Json ProgressParams(const Json& token, double progress, std::optional<double> total,
                    const std::string& message);
Json LogMessageParams(LogLevel level, const std::string& logger, const Json& data);
Json ResourceUpdatedParams(const std::string& uri);
Json CancelledNotificationParams(const Json& request_id, const std::string& reason);
Json ListenAcknowledgedParams(const ListenFilter& accepted);
// Tags a notification sent on a subscriptions/listen stream with that stream's id.
void TagSubscription(Json& params, const Json& subscription_id);

}  // namespace imgmcp::mcp
