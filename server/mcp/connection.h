// Connection: one client's MCP session over some transport — lifecycle state, negotiated version,
// log level, resource subscriptions, in-flight requests (for cancellation) and pending
// server→client requests. Created by McpServer::Connect; see server.h for the threading model.
//
// A transport feeds it every incoming message (HandleMessage/HandleJson, from any thread, in
// arrival order for one stream) and implements the MessageSink it writes to. On end of input the
// transport calls CancelAll(), WaitIdle(grace) and Close().
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>

#include "common/cancellation.h"
#include "common/json.h"
#include "common/result.h"
#include "server/mcp/json_rpc.h"
#include "server/mcp/message_sink.h"
#include "server/mcp/tool.h"

namespace imgmcp::mcp {

class McpServer;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Use McpServer::Connect.
  Connection(McpServer& server, MessageSink& sink);
  ~Connection();  // Close()
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // One incoming JSON text (a stdio line or an HTTP body). Invalid JSON → -32700 with id null;
  // nested deeper than kMaxJsonNestingDepth → -32600, checked on the text before parsing.
  void HandleMessage(std::string_view text);
  // One parsed message or batch array. One nested deeper than kMaxJsonNestingDepth → -32600.
  void HandleJson(Json message);

  // Cancels every in-flight request; their responses are not sent. Pending server→client
  // requests fail.
  void CancelAll();
  // Waits until no request is in flight; false on timeout.
  bool WaitIdle(std::chrono::milliseconds timeout);
  // CancelAll, then detaches the sink: once Close returns the sink is never called again and new
  // messages are ignored. Idempotent.
  void Close();

  // --- state (thread-safe) --------------------------------------------------------------------
  bool initialized() const;              // an initialize request was answered
  std::string protocol_version() const;  // negotiated; empty before initialize
  size_t InFlightCount() const;
  bool IsSubscribed(const std::string& uri) const;

  // --- outgoing, for the server and the tool-call context -------------------------------------
  // notifications/message to this client if `level` passes its logging/setLevel threshold.
  void SendLog(LogLevel level, const std::string& logger, const Json& data,
               const std::optional<Json>& related_request_id);
  // See MessageSink::CloseRequestStream. Thread-safe.
  void CloseRequestStream(const Json& request_id);
  // A notification (related to a request, or not); dropped before initialize and after Close.
  void SendNotification(std::string_view method, Json params,
                        const std::optional<Json>& related_request_id = std::nullopt);
  // notifications/resources/updated when this client subscribed to `uri`.
  void NotifyResourceUpdated(const std::string& uri);
  // A server→client request; blocks until the answer, an error, `cancel`, Close or the timeout.
  Result<Json> SendRequest(const std::string& method, const Json& params,
                           const std::optional<Json>& related_request_id,
                           const CancellationToken& cancel);

 private:
  struct Batch;
  struct PendingRequest;
  struct InFlight {
    Json id;
    CancellationToken token;  // cancelled → the response is dropped
    std::shared_ptr<Batch> batch;
  };

  void ProcessOne(Json message, const std::shared_ptr<Batch>& batch);
  void HandleRequest(const Json& id, const std::string& method, Json params,
                     const std::shared_ptr<Batch>& batch);
  void HandleNotification(const std::string& method, const Json& params);
  void HandleResponse(const Json& message);

  // These return the complete response message for request `id`.
  Json Initialize(const Json& id, const Json& params);
  Json SetLogLevel(const Json& id, const Json& params);
  Json Subscribe(const Json& id, const Json& params, bool subscribe);
  void StartToolCall(const Json& id, Json params, const std::shared_ptr<Batch>& batch);
  // Runs `work` (which returns the complete response message) as an in-flight, cancellable
  // request: on the worker pool, or on this thread when `quick` and the sink's caller waits for
  // the answer anyway (MessageSink::CallerAwaitsAnswers; never inside a batch).
  void RunAsync(const Json& id, const std::shared_ptr<Batch>& batch,
                std::function<Json(const CancellationToken&)> work, bool quick = false);
  bool CallerAwaitsAnswers();
  void FinishAsync(const Json& id, std::optional<Json> response);
  void Dropped(const Json& id);

  // Sends a response (or adds it to its batch).
  void Reply(const Json& id, Json response, const std::shared_ptr<Batch>& batch);
  void ReplyError(const Json& id, const RpcError& error, const std::shared_ptr<Batch>& batch);
  void BatchDone(const std::shared_ptr<Batch>& batch, std::optional<Json> response);
  void Emit(const Json& message, const std::optional<Json>& related_request_id);

  McpServer& server_;

  std::shared_mutex sink_mu_;  // guards sink_: shared while sending, exclusive to detach it
  MessageSink* sink_;

  mutable std::mutex mu_;  // guards every field below up to idle_cv_
  bool initialized_ = false;
  bool closed_ = false;
  std::string protocol_version_;
  Json client_capabilities_ = Json::object();
  std::set<std::string, std::less<>> subscriptions_;
  std::map<std::string, InFlight> in_flight_;                           // by IdKey
  std::map<std::string, std::shared_ptr<PendingRequest>> pending_out_;  // by IdKey
  int64_t next_out_id_ = 1;
  std::condition_variable idle_cv_;  // signalled when in_flight_ becomes empty

  std::atomic<int> log_level_;  // LogLevel threshold for notifications/message
};

}  // namespace imgmcp::mcp
