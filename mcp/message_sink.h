// The seam between the protocol core and a transport: where outgoing messages go.
#pragma once

#include <optional>
#include <string>

#include "common/json.h"

namespace imgmcp::mcp {

// One outgoing message as the core wrote it: what it is, which client request it belongs to, and
// its compact JSON text. Transports route and frame it by these fields; they never parse it.
struct OutgoingMessage {
  enum class Kind {
    kResponse,      // the answer (result or error) to request `related_request_id`
    kBatchAnswer,   // the array answering a 2025-03-26 batch (related: its first request's id)
    kNotification,  // progress, log, resource and subscription notifications
    kRequest,       // a server→client request (legacy sampling, elicitation, …)
  };
  Kind kind = Kind::kNotification;
  // The id of the client request this message belongs to: the request's own response, its
  // notifications/progress and notifications/message, server→client requests made while
  // handling it, and the notifications of a subscriptions/listen stream (related to that listen
  // request). nullopt for messages that belong to no request (legacy resource notifications) —
  // the HTTP transport sends those on the session's GET stream.
  std::optional<Json> related_request_id;
  std::string json;  // one compact JSON text, no newline
  // kResponse with an error: its code, and whether it was raised while checking the request
  // before any handler ran (RpcError::before_dispatch).
  std::optional<int> error_code;
  bool rejected_before_dispatch = false;
};

// Implemented by each transport, once per connection (stdio: the process's stdout; Streamable
// HTTP: one per Mcp-Session-Id, or one per modern request, routing by `related_request_id`).
//
// Called from any thread (the transport's reader thread and tool-call workers), concurrently:
// implementations serialise their own writes. Implementations must not call back into the
// Connection from Send.
class MessageSink {
 public:
  virtual ~MessageSink() = default;

  virtual void Send(OutgoingMessage message) = 0;

  // A request ended without any response (it was cancelled by notifications/cancelled or by
  // Connection::CancelAll). The HTTP transport uses this to close that POST's stream. For a
  // request inside a batch this is not called; the batch's answer simply omits it (and when the
  // whole batch produces nothing, OnRequestDropped is called with the batch's first request id).
  virtual void OnRequestDropped(const Json& request_id) {}

  // A running request asks to end the stream that carries its messages without ending the request
  // (SEP-1699 polling: the client reconnects with Last-Event-ID and gets the rest). Only the HTTP
  // transport has such streams; others ignore it.
  virtual void CloseRequestStream(const Json& request_id) {}

  // True when the thread that hands a request to the Connection then blocks until the request is
  // answered (an HTTP POST handler): a quick tool call may then run on that thread, which saves
  // two thread hand-offs. A transport that keeps reading while calls run (stdio) returns false.
  virtual bool CallerAwaitsAnswers() const { return false; }
};

}  // namespace imgmcp::mcp
