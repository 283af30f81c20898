// Connection: one client connection over some transport — the stdio process, one HTTP legacy
// session (Mcp-Session-Id), or one modern HTTP request. It reads each incoming message, decides
// its era (basic/versioning), dispatches it through the one method table (methods.cpp) and keeps
// what outlives a message: the legacy session (initialize, negotiated version, log level,
// resources/subscribe), in-flight requests (for cancellation), subscriptions/listen streams and
// pending server→client requests. Created by McpServer::Connect; see server.h for threading.
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
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/result.h"
#include "mcp/json_rpc.h"
#include "mcp/message_sink.h"
#include "mcp/method_table.h"
#include "mcp/protocol.h"
#include "mcp/task_json.h"
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

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Use McpServer::Connect.
  Connection(McpServer& server, MessageSink& sink, ConnectionMode mode);
  ~Connection();  // Close()
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // One incoming JSON text (a stdio line or an HTTP body). Invalid JSON → -32700 with id null;
  // nested deeper than kMaxJsonNestingDepth → -32600, checked on the text before parsing.
  void HandleMessage(std::string_view text);
  // One parsed message or batch array. One nested deeper than kMaxJsonNestingDepth → -32600.
  void HandleJson(Json message);
  // Why this connection would refuse `batch` (a JSON array), or nullopt: batches exist only in a
  // legacy session that negotiated 2025-03-26, and are never empty.
  std::optional<RpcError> CheckBatch(const Json& batch) const;

  // Ends every subscriptions/listen stream with its graceful result (server shutdown, end of
  // input).
  void EndSubscriptions();
  // Cancels every in-flight request; their responses are not sent — or, with `answer` (a server
  // that stops: its drain ran out of time), each is answered with that error once its work has
  // stopped. Pending server→client requests fail.
  void CancelAll(std::optional<RpcError> answer = std::nullopt);
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
  // subscriptions/listen stream that asked for it.
  void NotifyResourceUpdated(const std::string& uri);
  // notifications/{tools,prompts,resources}/list_changed to the listen streams that asked for it;
  // a legacy session gets the resources one (its capabilities declare only that).
  void NotifyListChanged(ListKind list);
  // notifications/tasks (the whole task) to the listen streams that asked for this task, and
  // notifications/tasks/status to the legacy session that created it (the 2025-11-25 utility).
  void NotifyTask(const TaskSnapshot& task);
  // True when a listen stream of this connection asked for this task.
  bool ListensForTask(const std::string& task_id) const;

  // Whose tasks this connection's requests create and see (task_runner.h): an opaque digest of
  // the credentials its transport checked, "" without any. Set before the first message.
  void SetTaskOwner(std::string owner);

  // See MessageSink::CloseRequestStream. Thread-safe.
  void CloseRequestStream(const Json& request_id);

 private:
  struct Batch;
  struct PendingRequest;
  class CallContext;

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
    std::shared_ptr<Batch> batch;
    std::chrono::steady_clock::time_point received;  // for the operation's duration metric
    std::string_view tool;                           // tools/call: the registered tool's name
    // Whose tasks it may see (task_runner.h): the transport's digest of the caller's
    // credentials, "" without any.
    std::string owner;
    bool modern() const { return era == Era::kModern; }
  };

  // What a handler answers: a result, an error, or nothing yet (it answers later itself).
  struct Outcome {
    std::optional<Json> result;
    std::optional<RpcError> error;
    static Outcome Of(Json result) { return Outcome{std::move(result), std::nullopt}; }
    static Outcome Fail(RpcError error) { return Outcome{std::nullopt, std::move(error)}; }
    static Outcome Later() { return Outcome{}; }
    static Outcome From(Result<Json> result);
  };

  // The method table: each method's facts (MethodInfo) and its handler, which parses the params
  // into its typed struct (an error names the field) and serves the request.
  using Handler = Outcome (Connection::*)(RequestScope& scope, const Json& params);
  struct MethodSpec {
    MethodInfo info;
    Handler handler = nullptr;
  };
  static const std::vector<MethodSpec>& Table();
  static std::vector<MethodSpec> TaskTable();  // the tasks methods' part of Table()
  static const MethodSpec* FindSpec(std::string_view name);
  friend const MethodInfo* FindMethod(std::string_view name);
  template <typename Params, Outcome (Connection::*Method)(RequestScope&, const Params&)>
  Outcome Typed(RequestScope& scope, const Json& params);
  bool Available(const MethodSpec& spec) const;  // e.g. prompts/* only with prompts registered

  struct InFlight {
    Json id;
    std::stop_source stop;  // requested → the work is cancelled and its response dropped
    std::shared_ptr<Batch> batch;
    bool subscription = false;  // a subscriptions/listen stream (no work behind it)
    std::optional<RpcError> answer_on_stop;  // …the response replaced by this error (CancelAll)
  };
  struct Subscription {
    Json id;  // the listen request's id: tags every notification of the stream
    ListenFilter filter;
  };

  // --- incoming ---
  void ProcessOne(Json message, const std::shared_ptr<Batch>& batch);
  void HandleRequest(IncomingMessage& in, const std::shared_ptr<Batch>& batch);
  void HandleNotification(const IncomingMessage& in);
  void HandleResponse(IncomingMessage& in);
  void HandleCancelled(const Json& request_id);

  // --- the methods (methods.cpp) ---
  Outcome Initialize(RequestScope& scope, const InitializeParams& params);
  Outcome Ping(RequestScope& scope, const NoParams& params);
  Outcome Discover(RequestScope& scope, const NoParams& params);
  Outcome Listen(RequestScope& scope, const ListenParams& params);
  Outcome SetLogLevel(RequestScope& scope, const SetLevelParams& params);
  Outcome Subscribe(RequestScope& scope, const UriParams& params);
  Outcome Unsubscribe(RequestScope& scope, const UriParams& params);
  Outcome ListTools(RequestScope& scope, const ListParams& params);
  Outcome CallTool(RequestScope& scope, const CallToolParams& params);
  Outcome ListResources(RequestScope& scope, const ListParams& params);
  Outcome ListResourceTemplates(RequestScope& scope, const ListParams& params);
  Outcome ReadResource(RequestScope& scope, const UriParams& params);
  Outcome ListPrompts(RequestScope& scope, const ListParams& params);
  Outcome GetPrompt(RequestScope& scope, const GetPromptParams& params);
  Outcome Complete(RequestScope& scope, const CompleteParams& params);
  Outcome Cancelled(RequestScope& scope, const CancelledParams& params);
  Outcome Initialized(RequestScope& scope, const NoParams& params);
  // The tasks extension (task_methods.cpp).
  Outcome GetTask(RequestScope& scope, const TaskIdParams& params);
  Outcome UpdateTask(RequestScope& scope, const TaskUpdateParams& params);
  Outcome CancelTask(RequestScope& scope, const TaskIdParams& params);
  // tools/call answered with a task: starts the admitted call as a task of the caller's.
  Outcome StartTask(const RequestScope& scope, const ToolSpec& tool, const CallToolParams& params,
                    std::shared_ptr<AdmittedCall> call, InputResponses inputs);
  // Whether a tools/call of `tool` becomes a task (modern: the extension declared and the server
  // decides; legacy: params.task in a 2025-11-25 session); the error is the answer (e.g. the
  // tool needs the extension and the client did not declare it).
  Result<bool> CallAsTask(const RequestScope& scope, const ToolSpec& tool,
                          const CallToolParams& params) const;
  // The 2025-11-25 tasks utility of legacy sessions (legacy_task_methods.cpp).
  Outcome LegacyGetTask(RequestScope& scope, const TaskIdParams& params);
  Outcome LegacyCancelTask(RequestScope& scope, const TaskIdParams& params);
  Outcome TaskResult(RequestScope& scope, const TaskIdParams& params);
  Outcome ListTasks(RequestScope& scope, const ListParams& params);
  // tasks/result on a worker: waits for the task to end and answers what its call answered.
  Outcome AwaitTaskResult(const RequestScope& scope, const std::string& task_id,
                          std::stop_token token);
  // A legacy task's CreateTaskResult, sent at once; then its status notifications follow.
  Outcome AnswerLegacyTask(const RequestScope& scope, const TaskSnapshot& task);
  // notifications/tasks/status of a task this legacy session created, once per new status.
  void NotifyLegacyTask(const TaskSnapshot& task);

  // Runs an admitted tools/call on this (worker) thread.
  Outcome RunTool(const RequestScope& scope, const ToolSpec& tool, AdmittedCall& call,
                  const InputResponses& inputs, std::stop_token token);

  // --- multi round-trip requests (MRTR), tools/call and prompts/get ---
  // Verifies a retry's sealed requestState for `request` (e.g. "tools/call name") and replaces
  // it with the handler's plain state; the error (-32602) is the answer.
  std::optional<RpcError> OpenRequestState(const std::string& request,
                                           InputResponses* inputs) const;
  // The input_required answer: its requests only for capabilities the client declared (else
  // -32021), its state sealed for `request`. Legacy requests cannot be answered so (-32603).
  Outcome AskForInput(const RequestScope& scope, const std::string& request,
                      InputRequest input) const;

  // --- asynchronous requests ---
  // Runs `work` as an in-flight, cancellable request: on the worker pool, or on this thread when
  // `quick` and the sink's caller waits for the answer anyway (MessageSink::CallerAwaitsAnswers;
  // never inside a batch).
  void RunAsync(const RequestScope& scope,
                std::function<Outcome(Connection& self, std::stop_token)> work, bool quick = false);
  bool CallerAwaitsAnswers();
  void FinishAsync(const RequestScope& scope, std::optional<Outcome> outcome);
  void Dropped(const Json& id);
  void EndSubscription(const Json& id, bool graceful);

  // --- outgoing ---
  // Answers the request of `scope` (a modern result gets its era's members), or adds the answer
  // to its batch.
  void Answer(const RequestScope& scope, Outcome outcome);
  // Records the answered request in the server's metrics, when they are on.
  void Measure(const RequestScope& scope, const Outcome& outcome) const;
  void ReplyError(const Json& id, const RpcError& error, const std::shared_ptr<Batch>& batch);
  void BatchDone(const std::shared_ptr<Batch>& batch, std::optional<Json> response);
  void Emit(OutgoingMessage message);
  // A notification; `related` routes it (see OutgoingMessage). Without `modern`, it belongs to the
  // legacy session and is dropped before initialize.
  void EmitNotification(std::string_view method, Json params, const std::optional<Json>& related,
                        bool modern);
  void SendLog(const RequestScope& scope, LogLevel level, const std::string& logger,
               const Json& data);
  // A legacy server→client request; blocks until the answer, an error, `cancel`, Close or the
  // timeout.
  Result<Json> SendRequest(const std::string& method, const Json& params,
                           const std::optional<Json>& related_request_id, std::stop_token cancel);

  McpServer& server_;
  const ConnectionMode mode_;

  std::shared_mutex sink_mu_;  // guards sink_: shared while sending, exclusive to detach it
  MessageSink* sink_;

  mutable std::mutex mu_;  // guards every field below up to idle_cv_
  bool initialized_ = false;
  bool closed_ = false;
  std::string protocol_version_;
  Json client_capabilities_ = Json::object();
  std::string task_owner_;
  // Tasks this legacy session created that have not ended: the last status it was told of.
  std::map<std::string, std::string> legacy_tasks_;
  std::set<std::string, std::less<>> subscriptions_;  // legacy resources/subscribe
  std::map<std::string, Subscription> listens_;       // by IdKey: subscriptions/listen streams
  std::map<std::string, InFlight> in_flight_;         // by IdKey
  std::map<std::string, std::shared_ptr<PendingRequest>> pending_out_;  // by IdKey
  int64_t next_out_id_ = 1;
  std::condition_variable_any idle_cv_;  // signalled when in_flight_ becomes empty

  std::atomic<int> log_level_;  // legacy session's LogLevel threshold for notifications/message
};

}  // namespace imgmcp::mcp
