// The seam between the protocol core and a transport: where outgoing messages go.
#pragma once

#include <optional>

#include "common/json.h"

namespace imgmcp::mcp {

// Implemented by each transport, once per connection (stdio: the process's stdout; Streamable
// HTTP: one per Mcp-Session-Id, routing by `related_request_id`).
//
// Called from any thread (the transport's reader thread and tool-call workers), concurrently:
// implementations serialise their own writes. Implementations must not call back into the
// Connection from Send.
class MessageSink {
 public:
  virtual ~MessageSink() = default;

  // One outgoing JSON-RPC message: a response, a notification, a server→client request, or the
  // array answering a 2025-03-26 batch.
  //
  // `related_request_id` is the id of the client request this message belongs to: the request's
  // own response, its notifications/progress and notifications/message, and server→client
  // requests (sampling, elicitation) made while handling it. For a batch answer it is the id of
  // the batch's first request. nullopt for messages that belong to no request
  // (notifications/resources/updated, …/list_changed) — the HTTP transport sends those on the
  // session's GET stream.
  virtual void Send(const Json& message, const std::optional<Json>& related_request_id) = 0;

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
