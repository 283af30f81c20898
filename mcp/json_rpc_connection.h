// JsonRpcConnection: the JSON-RPC 2.0 plumbing of one client connection, and nothing of MCP's
// methods, eras or session. It reads incoming text or JSON (nesting checked, batches split and
// answered together, responses matched to this side's requests), keeps the requests in flight
// with their stop sources (duplicate ids refused, notifications/cancelled, CancelAll, WaitIdle),
// writes answers and notifications to the transport's MessageSink, and makes server→client
// requests, each waiting in a table of pending calls for the client's answer. What a request or
// notification means is its Handler's (Connection, connection.h: the method table); the state of
// the MCP session is SessionState's (session_state.h).
//
// Thread-safe: messages may arrive on any thread, and answers and notifications leave from
// whichever thread produced them. The mutexes are taken one at a time, never while calling the
// handler or the sink.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/result.h"
#include "common/thread_annotations.h"
#include "mcp/json_rpc.h"
#include "mcp/message_sink.h"

namespace imgmcp::mcp {

// The answer to a 2025-03-26 batch, assembled while its requests are served
// (json_rpc_connection.cpp).
struct RpcBatch;

class JsonRpcConnection {
 public:
  // Serves what arrives besides responses.
  class Handler {
   public:
    virtual ~Handler() = default;
    // Why a batch (a JSON array) is refused (answered with this error, id null), or nullopt.
    virtual std::optional<RpcError> CheckBatch(const Json& batch) const = 0;
    // A well-formed request: answered, now or later, through Respond/ReplyError/NoAnswer with
    // its id and `batch` (null outside a batch).
    virtual void HandleRequest(IncomingMessage& in, const std::shared_ptr<RpcBatch>& batch) = 0;
    // A well-formed notification: never answered.
    virtual void HandleNotification(const IncomingMessage& in) = 0;
  };

  // `omit_null_ids`: error responses leave out an id that could not be read (the 2026-07-28
  // schema) instead of sending null.
  JsonRpcConnection(MessageSink& sink, Handler& handler, bool omit_null_ids);
  ~JsonRpcConnection();  // defined where InFlight and PendingCall are complete
  JsonRpcConnection(const JsonRpcConnection&) = delete;
  JsonRpcConnection& operator=(const JsonRpcConnection&) = delete;

  // --- incoming -------------------------------------------------------------------------------
  // One JSON text. Invalid JSON → -32700 with id null; nested deeper than kMaxJsonNestingDepth →
  // -32600, checked on the text before parsing.
  void Receive(std::string_view text);
  // One parsed message or batch array. One nested deeper than kMaxJsonNestingDepth → -32600.
  void Receive(Json message);

  // --- answers (to the request `id`, or into its batch) ---------------------------------------
  void Respond(const Json& id, Json result, const std::shared_ptr<RpcBatch>& batch);
  void ReplyError(const Json& id, const RpcError& error, const std::shared_ptr<RpcBatch>& batch);
  // The request ends without an answer: its batch answers without it, or (outside a batch) the
  // sink hears that it was dropped (MessageSink::OnRequestDropped).
  void NoAnswer(const Json& id, const std::shared_ptr<RpcBatch>& batch);

  // --- outgoing -------------------------------------------------------------------------------
  // A notification; `related` routes it (OutgoingMessage). Dropped once the connection is closed.
  void Notify(std::string_view method, Json params, const std::optional<Json>& related);
  // A server→client request: blocks until the client's answer (an error answer is
  // kFailedPrecondition describing it), `timeout` after sending, a stop of `cancel` or Close. On
  // a timeout or a cancel the client is sent notifications/cancelled for it.
  Result<Json> Call(std::string_view method, const Json& params, const std::optional<Json>& related,
                    std::chrono::milliseconds timeout, std::stop_token cancel);
  // See MessageSink::CloseRequestStream and CallerAwaitsAnswers; false once detached.
  void CloseRequestStream(const Json& request_id);
  bool CallerAwaitsAnswers();

  // --- requests in flight ---------------------------------------------------------------------
  enum class Admission { kAdmitted, kClosed, kDuplicate };
  // Records request `id` as in flight until End (or, for a `stream` — a request that stays open
  // with no work behind it, a subscriptions/listen stream — EndStream). `stop` is requested by
  // Cancel, CancelAll and Close. kDuplicate: a request with that id is in flight already.
  Admission Begin(const Json& id, const std::shared_ptr<RpcBatch>& batch, bool stream,
                  std::stop_source stop = {});
  // What becomes of a request whose work has finished: `known` false when it is not in flight;
  // `stopped` when it was cancelled (no answer) — unless CancelAll gave `replacement`, the error
  // answered instead.
  struct Verdict {
    bool known = false;
    bool stopped = false;
    std::optional<RpcError> replacement;
  };
  Verdict Check(const Json& id) const;
  // The request has been answered (or dropped): no longer in flight.
  void End(const Json& id);
  // Ends a stream's entry; true when it was in flight.
  bool EndStream(const Json& id);
  bool IsInFlight(const Json& id) const;
  enum class Cancelled { kUnknown, kStopped, kStream };
  // notifications/cancelled of request `id`: its work is stopped (kStopped), or it is a stream
  // (kStream: not stopped here; its owner ends it) or unknown or answered already (kUnknown).
  Cancelled Cancel(const Json& id);
  // Stops every request in flight; with `answer`, each is answered with that error once its work
  // has stopped (Check's replacement). Returns the ids of the streams, which it leaves to their
  // owner to end.
  std::vector<Json> CancelAll(const std::optional<RpcError>& answer);
  size_t InFlightCount() const;
  // Waits until no request is in flight; false on timeout or when `stop` is requested first.
  bool WaitIdle(std::chrono::milliseconds timeout, std::stop_token stop);
  // Stops every request and forgets the streams, fails the pending server→client requests, then
  // detaches the sink: once Close returns the sink is never called again and new messages are
  // ignored. Idempotent.
  void Close();

 private:
  struct InFlight;
  struct PendingCall;

  void ProcessOne(Json message, const std::shared_ptr<RpcBatch>& batch);
  void ReceiveBatch(Json message);
  void HandleResponse(IncomingMessage& in);
  void BatchDone(const std::shared_ptr<RpcBatch>& batch, std::optional<Json> response);
  void Emit(OutgoingMessage message);
  void Dropped(const Json& id);

  Handler& handler_;
  const bool omit_null_ids_;

  SharedMutex sink_mu_;  // guards sink_: shared while sending, exclusive to detach it
  MessageSink* sink_ GUARDED_BY(sink_mu_);

  // Set first by Close; each table below is then emptied under its own mutex, so a check of
  // closed_ and an insert made under that mutex are one step.
  std::atomic<bool> closed_{false};

  mutable Mutex requests_mu_;                                           // guards in_flight_
  std::map<std::string, InFlight> in_flight_ GUARDED_BY(requests_mu_);  // by IdKey
  std::condition_variable_any idle_cv_;  // with requests_mu_: in_flight_ became empty

  Mutex calls_mu_;  // guards pending_calls_ and next_call_id_
  std::map<std::string, std::shared_ptr<PendingCall>> pending_calls_
      GUARDED_BY(calls_mu_);  // by IdKey
  int64_t next_call_id_ GUARDED_BY(calls_mu_) = 1;
};

}  // namespace imgmcp::mcp
