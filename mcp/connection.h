// Connection: one client connection over some transport — the stdio process, one HTTP legacy
// session (Mcp-Session-Id), or one modern HTTP request. Created by McpServer::Connect; see
// server.h for threading. It is the MCP side of the connection, split as in the Go SDK's mcp
// package:
// - JsonRpcConnection (json_rpc_connection.h): the JSON-RPC plumbing — reading and batches, ids,
//   requests in flight and their cancellation, answers, server→client requests, the sink;
// - SessionState (session_state.h): what the session remembers — initialize's version and client
//   capabilities, log level, resources/subscribe, subscriptions/listen streams, legacy tasks;
// - the method handlers (method_handlers.h): free functions named in the one method table
//   (methods.cpp), each with its eras and typed params.
// Connection itself decides each request's era, dispatches it through the table, runs the work
// of the asynchronous ones, and sends the notifications the server's changes call for.
//
// Eras: a request whose params._meta names a protocol version is served statelessly as a modern
// (2026-07-28) request, from that _meta; any other message belongs to the legacy session opened
// by initialize. On stdio both can come on one pipe (a client probes with server/discover, then
// initializes); a kModernOnly connection (one modern HTTP request) treats every request as modern.
//
// A transport feeds it every incoming message (HandleMessage/HandleJson, from any thread, in
// arrival order for one stream) and implements the MessageSink it writes to. On end of input the
// transport calls EndSubscriptions(), CancelAll(), WaitIdle(grace) and Close().
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "common/json.h"
#include "common/result.h"
#include "mcp/json_rpc.h"
#include "mcp/json_rpc_connection.h"
#include "mcp/message_sink.h"
#include "mcp/method_table.h"
#include "mcp/protocol.h"
#include "mcp/request_scope.h"
#include "mcp/session_state.h"
#include "mcp/task_json.h"
#include "mcp/task_runner.h"
#include "mcp/tool.h"
#include "mcp/tool_registry.h"

namespace imgmcp::mcp {

class McpServer;

enum class ConnectionMode {
  kDual,        // legacy session by initialize, and modern requests by their _meta (stdio, HTTP
                // legacy sessions)
  kModernOnly,  // every request is modern; a missing _meta is an error (one modern HTTP request)
};

// Which list changed, for NotifyListChanged.
enum class ListKind { kTools, kPrompts, kResources };

class Connection : public std::enable_shared_from_this<Connection>,
                   private JsonRpcConnection::Handler {
 public:
  // Use McpServer::Connect.
  Connection(McpServer& server, MessageSink& sink, ConnectionMode mode);
  ~Connection() override;  // Close()
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // One incoming JSON text (a stdio line or an HTTP body). Invalid JSON → -32700 with id null;
  // nested deeper than kMaxJsonNestingDepth → -32600, checked on the text before parsing.
  void HandleMessage(std::string_view text);
  // One parsed message or batch array. One nested deeper than kMaxJsonNestingDepth → -32600.
  void HandleJson(Json message);
  // Why this connection would refuse `batch` (a JSON array), or nullopt: batches exist only in a
  // legacy session that negotiated 2025-03-26, and are never empty.
  std::optional<RpcError> CheckBatch(const Json& batch) const override;

  // Ends every subscriptions/listen stream with its graceful result (server shutdown, end of
  // input).
  void EndSubscriptions();
  // Cancels every in-flight request; their responses are not sent — or, with `answer` (a server
  // that stops: its drain ran out of time), each is answered with that error once its work has
  // stopped. Pending server→client requests fail.
  void CancelAll(const std::optional<RpcError>& answer = std::nullopt);
  // Waits until no request is in flight; false on timeout or when `stop` is requested first.
  bool WaitIdle(std::chrono::milliseconds timeout, std::stop_token stop = {});
  // CancelAll, then detaches the sink: once Close returns the sink is never called again and new
  // messages are ignored. Idempotent.
  void Close();

  // --- state (thread-safe) --------------------------------------------------------------------
  bool initialized() const;              // an initialize request was answered
  std::string protocol_version() const;  // negotiated; empty before initialize
  size_t InFlightCount() const;
  bool IsSubscribed(const std::string& uri) const;  // legacy resources/subscribe

  // --- changes, from the server's notifier ----------------------------------------------------
  // notifications/resources/updated to a legacy session subscribed to `uri` and to every
  // subscriptions/listen stream that asked for it, when the connection's caller is `principal`
  // (caller.h; "" the local one).
  void NotifyResourceUpdated(const std::string& uri, const std::string& principal = "");
  // notifications/{tools,prompts,resources}/list_changed to the listen streams that asked for it;
  // a legacy session gets the resources one (its capabilities declare only that).
  void NotifyListChanged(ListKind list);
  // Whose sessions this connection's requests reach (caller.h); "" the local principal.
  std::string caller_principal() const { return session_.caller().principal; }
  bool caller_reaches_one_session() const { return !session_.caller().only_session.empty(); }
  // notifications/tasks (the whole task) to the listen streams that asked for this task, and
  // notifications/tasks/status to the legacy session that created it (the 2025-11-25 utility).
  void NotifyTask(const TaskSnapshot& task);
  // True when a listen stream of this connection asked for this task.
  bool ListensForTask(const std::string& task_id) const;

  // Who makes this connection's requests (caller.h): whose tasks and sessions they reach, as its
  // transport authenticated them; nobody's in particular (stdio) when never set. Set before the
  // first message (an HTTP transport sets it again for each request).
  void SetCaller(Caller caller);

  // See MessageSink::CloseRequestStream. Thread-safe.
  void CloseRequestStream(const Json& request_id);

  // --- for the method handlers (method_handlers.h), not for transports ------------------------
  McpServer& server() const { return server_; }
  SessionState& session() { return session_; }
  JsonRpcConnection& rpc() { return rpc_; }
  // Runs `work` as an in-flight, cancellable request: on the worker pool, or on this thread when
  // `quick` and the sink's caller waits for the answer anyway (MessageSink::CallerAwaitsAnswers;
  // never inside a batch).
  void RunAsync(const RequestScope& scope,
                std::function<Outcome(Connection& self, std::stop_token)> work, bool quick = false);
  // Answers the request of `scope` (a modern result gets its era's members), or adds the answer
  // to its batch; nothing for Outcome::Later().
  void Answer(const RequestScope& scope, Outcome outcome);
  // A notification; `related` routes it (see OutgoingMessage). Without `modern`, it belongs to the
  // legacy session and is dropped before initialize.
  void EmitNotification(std::string_view method, Json params, const std::optional<Json>& related,
                        bool modern);
  // notifications/message for the request of `scope`, when its era's log level lets it through.
  void SendLog(const RequestScope& scope, LogLevel level, const std::string& logger,
               const Json& data);
  // A legacy server→client request, for a capability the client declared; blocks until the
  // answer, an error, `cancel`, Close or the server's client_request_timeout.
  Result<Json> SendRequest(const std::string& method, const Json& params,
                           const std::optional<Json>& related_request_id, std::stop_token cancel);
  // Ends subscriptions/listen stream `id`: with its graceful result, or dropped.
  void EndSubscription(const Json& id, bool graceful);

 private:
  // JsonRpcConnection::Handler: decides the era, finds the method and runs its handler.
  void HandleRequest(IncomingMessage& in, const std::shared_ptr<RpcBatch>& batch) override;
  void HandleNotification(const IncomingMessage& in) override;
  // The request's era and client context; the error is the answer.
  std::optional<RpcError> ReadScope(const IncomingMessage& in, RequestScope& scope) const;
  void FinishAsync(const RequestScope& scope, std::optional<Outcome> outcome);

  McpServer& server_;
  const ConnectionMode mode_;
  SessionState session_;   // thread-safe itself
  JsonRpcConnection rpc_;  // thread-safe itself
};

}  // namespace imgmcp::mcp
