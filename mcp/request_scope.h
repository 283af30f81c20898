// What a method handler (method_handlers.h) is given and gives back: the scope of the request it
// serves, and its outcome.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/json.h"
#include "common/result.h"
#include "mcp/caller.h"
#include "mcp/json_rpc.h"
#include "mcp/log_level.h"
#include "mcp/protocol_version.h"

namespace imgmcp::mcp {

struct MethodInfo;
struct RpcBatch;

// One request being served: its id, era and the client's context for it (from the legacy
// session, or from the request's own _meta).
struct RequestScope {
  Json id;
  Era era = Era::kLegacy;
  const MethodInfo* method = nullptr;
  std::string protocol_version;
  Json client_capabilities = Json::object();
  std::optional<LogLevel> log_level;  // modern: the request's logLevel (absent: no logs)
  std::optional<Json> progress_token;
  std::string traceparent;  // params._meta.traceparent when valid (ReadTraceParent), else ""
  std::string session_id;   // tools/call: the arguments' session_id, for log lines
  std::shared_ptr<RpcBatch> batch;
  std::chrono::steady_clock::time_point received;  // for the operation's duration metric
  std::string_view tool;                           // tools/call: the registered tool's name
  // Who made it: whose tasks it may see (caller.owner) and whose sessions its tools reach.
  Caller caller;
  bool modern() const { return era == Era::kModern; }
};

// What a handler answers: a result, an error, or nothing yet (it answers later itself).
struct Outcome {
  std::optional<Json> result;
  std::optional<RpcError> error;
  static Outcome Of(Json result) { return Outcome{std::move(result), std::nullopt}; }
  static Outcome Fail(RpcError error) { return Outcome{std::nullopt, std::move(error)}; }
  static Outcome Later() { return Outcome{}; }
  static Outcome From(Result<Json> result) {
    if (result.ok()) return Of(std::move(result).value());
    return Fail(ToRpcError(result.error()));
  }
};

}  // namespace imgmcp::mcp
