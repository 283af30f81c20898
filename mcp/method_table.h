// What the core's one method table says about each method it knows, for anyone routing messages:
// the eras a method exists in, how it is answered, its caching hints, which param the HTTP
// Mcp-Name header mirrors and which server capability it depends on. The table itself (with the
// handlers) is in methods.cpp.
#pragma once

#include <optional>
#include <string_view>

#include "mcp/protocol.h"
#include "mcp/protocol_version.h"

namespace imgmcp::mcp {

struct MethodInfo {
  std::string_view name;
  bool legacy = false;  // exists in the legacy era (after initialize unless before_initialize)
  bool modern = false;  // exists in the modern era (2026-07-28)
  bool notification = false;
  bool before_initialize = false;  // legacy: may come before initialize
  // Answered on the thread that hands the request in (cheap); else on the worker pool.
  bool inline_answer = true;
  // May send notifications (progress, logs) before its answer: an HTTP POST then switches to a
  // stream soon rather than waiting for the answer.
  bool streams = false;
  // Stays open, sending notifications, until the client ends it (subscriptions/listen).
  bool long_lived = false;
  std::optional<CachePolicy> cache = std::nullopt;  // modern results carry ttlMs/cacheScope
  // The params member the Mcp-Name header mirrors ("name", "uri"), or nullptr.
  const char* name_param = nullptr;
  // The capability the server must declare for the method to exist (prompts/* only with
  // prompts registered, completion/complete only with a completion handler), or nullptr.
  bool ServerCapabilities::*capability = nullptr;

  bool ExistsIn(Era era) const { return era == Era::kModern ? modern : legacy; }
};

// nullptr for a method the core does not know.
const MethodInfo* FindMethod(std::string_view name);

// What a transport may need to know of one incoming message before handing it to the core.
struct RequestFacts {
  IncomingMessage::Kind kind = IncomingMessage::Kind::kInvalid;
  Json id;                                     // null when there is none
  std::string method;                          // requests and notifications
  const MethodInfo* info = nullptr;            // nullptr for unknown methods
  bool envelope_claim = false;                 // params._meta names a protocol version
  std::optional<std::string> claimed_version;  // that version, when it is a string
  std::optional<std::string> name;             // the value of info->name_param, when a string
};
// Reads the facts of a single (non-batch) message without taking it apart.
RequestFacts ReadRequestFacts(const Json& message);

}  // namespace imgmcp::mcp
