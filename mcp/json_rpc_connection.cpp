#include "mcp/json_rpc_connection.h"

#include <exception>
#include <utility>

#include "common/log.h"
#include "common/thread_annotations.h"
#include "mcp/json_writer.h"
#include "mcp/log_tag.h"
#include "mcp/protocol.h"

namespace imgmcp::mcp {

// The answer to a 2025-03-26 batch: one response per request, sent together when the last one is
// done. `pending` starts at 1 (a guard released after dispatch) and counts undone elements.
struct RpcBatch {
  std::optional<Json> first_request_id;  // written before dispatch, then read-only
  Mutex mu;                              // guards responses and pending
  Json responses GUARDED_BY(mu) = Json::array();
  int pending GUARDED_BY(mu) = 1;
};

// One request in flight.
struct JsonRpcConnection::InFlight {
  Json id;
  std::stop_source stop;  // requested → the work is cancelled and its response dropped
  std::shared_ptr<RpcBatch> batch;
  bool stream = false;                  // stays open with no work behind it (EndStream ends it)
  std::optional<RpcError> replacement;  // …the response replaced by this error (CancelAll)
};

// A server→client request waiting for the client's answer.
struct JsonRpcConnection::PendingCall {
  Mutex mu;  // guards outcome
  std::condition_variable_any cv;
  std::optional<Result<Json>> outcome GUARDED_BY(mu);

  void Fulfil(Result<Json> result) {
    {
      MutexLock lock(mu);
      if (!outcome) outcome.emplace(std::move(result));
    }
    cv.notify_all();
  }
};

JsonRpcConnection::JsonRpcConnection(MessageSink& sink, Handler& handler, bool omit_null_ids)
    : handler_(handler), omit_null_ids_(omit_null_ids), sink_(&sink) {}

JsonRpcConnection::~JsonRpcConnection() = default;

// --- incoming -------------------------------------------------------------------------------

void JsonRpcConnection::Receive(std::string_view text) {
  ParsedMessage parsed = ParseMessageText(text);
  if (parsed.error) {
    ReplyError(nullptr, *parsed.error, nullptr);
    return;
  }
  Receive(std::move(parsed.message));
}

void JsonRpcConnection::Receive(Json message) {
  try {
    if (NestsDeeperThan(message, kMaxJsonNestingDepth)) {
      ReplyError(ReadableId(message), InvalidRequest(TooDeepMessage()), nullptr);
      return;
    }
    if (!IsBatch(message)) {
      ProcessOne(std::move(message), nullptr);
      return;
    }
    if (auto refusal = handler_.CheckBatch(message)) {
      ReplyError(nullptr, *refusal, nullptr);
      return;
    }
    ReceiveBatch(std::move(message));
  } catch (const std::exception& e) {  // a bug below: answer rather than die
    log::Error(kLog, std::string("unexpected exception handling a message: ") + e.what());
    ReplyError(nullptr, InternalError("Internal error"), nullptr);
  }
}

void JsonRpcConnection::ReceiveBatch(Json message) {
  auto batch = std::make_shared<RpcBatch>();
  for (const Json& element : message) {
    const Json* params = nullptr;
    IncomingMessage shape = PeekIncoming(element, &params);
    if (shape.kind == IncomingMessage::Kind::kRequest) {
      batch->first_request_id = shape.id;
      break;
    }
  }
  for (Json& element : message) {
    {
      MutexLock lock(batch->mu);
      ++batch->pending;
    }
    ProcessOne(std::move(element), batch);
  }
  BatchDone(batch, std::nullopt);  // release the guard
}

void JsonRpcConnection::ProcessOne(Json message, const std::shared_ptr<RpcBatch>& batch) {
  IncomingMessage in = ReadIncoming(std::move(message));
  switch (in.kind) {
    case IncomingMessage::Kind::kRequest:
      if (in.error) {
        ReplyError(in.id, *in.error, batch);
      } else {
        handler_.HandleRequest(in, batch);
      }
      return;
    case IncomingMessage::Kind::kNotification:
      if (!in.error) handler_.HandleNotification(in);  // never answered
      break;
    case IncomingMessage::Kind::kResponse:
      HandleResponse(in);
      break;
    case IncomingMessage::Kind::kInvalid:
      if (in.error) {
        ReplyError(in.id, *in.error, batch);
        return;
      }
      break;  // a stray response: dropped
  }
  if (batch) BatchDone(batch, std::nullopt);
}

void JsonRpcConnection::HandleResponse(IncomingMessage& in) {
  std::shared_ptr<PendingCall> pending;
  {
    MutexLock lock(calls_mu_);
    auto it = pending_calls_.find(IdKey(in.id));
    if (it == pending_calls_.end()) {
      log::Debug(kLog, "ignoring a response to unknown request " + in.id.dump());
      return;
    }
    pending = std::move(it->second);
    pending_calls_.erase(it);
  }
  if (in.result) {
    pending->Fulfil(Result<Json>(std::move(*in.result)));
    return;
  }
  pending->Fulfil(Result<Json>(
      MakeError(ErrorCode::kFailedPrecondition, DescribeClientError(*in.response_error))));
}

// --- answers --------------------------------------------------------------------------------

void JsonRpcConnection::Respond(const Json& id, Json result,
                                const std::shared_ptr<RpcBatch>& batch) {
  Json response = MakeResult(id, std::move(result));
  if (batch) {
    BatchDone(batch, std::move(response));
    return;
  }
  OutgoingMessage message;
  message.kind = OutgoingMessage::Kind::kResponse;
  message.related_request_id = id;
  message.json = DumpCompactJson(response);
  Emit(std::move(message));
}

void JsonRpcConnection::ReplyError(const Json& id, const RpcError& error,
                                   const std::shared_ptr<RpcBatch>& batch) {
  Json response = MakeErrorResponse(id, error, omit_null_ids_);
  if (batch) {
    BatchDone(batch, std::move(response));
    return;
  }
  OutgoingMessage message;
  message.kind = OutgoingMessage::Kind::kResponse;
  if (!id.is_null()) message.related_request_id = id;
  message.json = DumpCompactJson(response);
  message.error_code = error.code;
  message.rejected_before_dispatch = error.before_dispatch;
  Emit(std::move(message));
}

void JsonRpcConnection::NoAnswer(const Json& id, const std::shared_ptr<RpcBatch>& batch) {
  if (batch) {
    BatchDone(batch, std::nullopt);
  } else {
    Dropped(id);
  }
}

void JsonRpcConnection::BatchDone(const std::shared_ptr<RpcBatch>& batch,
                                  std::optional<Json> response) {
  Json answer;
  {
    MutexLock lock(batch->mu);
    if (response) batch->responses.push_back(std::move(*response));
    if (--batch->pending > 0) return;
    answer = std::move(batch->responses);
  }
  if (!answer.empty()) {
    OutgoingMessage message;
    message.kind = OutgoingMessage::Kind::kBatchAnswer;
    message.related_request_id = batch->first_request_id;
    message.json = DumpCompactJson(answer);
    Emit(std::move(message));
  } else if (batch->first_request_id) {
    Dropped(*batch->first_request_id);
  }
}

// --- outgoing -------------------------------------------------------------------------------

void JsonRpcConnection::Emit(OutgoingMessage message) {
  ReaderLock lock(sink_mu_);
  if (sink_ != nullptr) sink_->Send(std::move(message));
}

void JsonRpcConnection::Dropped(const Json& id) {
  ReaderLock lock(sink_mu_);
  if (sink_ != nullptr) sink_->OnRequestDropped(id);
}

void JsonRpcConnection::CloseRequestStream(const Json& request_id) {
  ReaderLock lock(sink_mu_);
  if (sink_ != nullptr) sink_->CloseRequestStream(request_id);
}

bool JsonRpcConnection::CallerAwaitsAnswers() {
  ReaderLock lock(sink_mu_);
  return sink_ != nullptr && sink_->CallerAwaitsAnswers();
}

void JsonRpcConnection::Notify(std::string_view method, Json params,
                               const std::optional<Json>& related) {
  if (closed_) return;
  OutgoingMessage message;
  message.kind = OutgoingMessage::Kind::kNotification;
  message.related_request_id = related;
  message.json = DumpCompactJson(MakeNotification(method, std::move(params)));
  Emit(std::move(message));
}

Result<Json> JsonRpcConnection::Call(std::string_view method, const Json& params,
                                     const std::optional<Json>& related,
                                     std::chrono::milliseconds timeout, std::stop_token cancel) {
  auto pending = std::make_shared<PendingCall>();
  Json id;
  {
    MutexLock lock(calls_mu_);
    if (closed_) return MakeError(ErrorCode::kUnavailable, "the connection is closed");
    id = next_call_id_++;
    pending_calls_.emplace(IdKey(id), pending);
  }
  OutgoingMessage message;
  message.kind = OutgoingMessage::Kind::kRequest;
  message.related_request_id = related;
  message.json = DumpCompactJson(MakeRequest(id, method, params));
  Emit(std::move(message));

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::optional<Error> gave_up;
  {
    // Woken by the answer, by Close(), or by a stop of `cancel`.
    MutexLock lock(pending->mu);
    const auto answered = [&] {
      pending->mu.AssertHeld();
      return pending->outcome.has_value();
    };
    if (pending->cv.wait_until(lock, cancel, deadline, answered)) {
      return std::move(*pending->outcome);  // set once, never replaced (Fulfil)
    }
    gave_up = cancel.stop_requested()
                  ? MakeError(ErrorCode::kCancelled, "cancelled")
                  : MakeError(ErrorCode::kDeadlineExceeded,
                              "the client did not answer " + std::string(method) + " in time");
  }
  {
    MutexLock lock(calls_mu_);
    pending_calls_.erase(IdKey(id));
  }
  Notify(methods::kCancelled, CancelledNotificationParams(id, gave_up->message), related);
  return *gave_up;
}

// --- requests in flight ---------------------------------------------------------------------

JsonRpcConnection::Admission JsonRpcConnection::Begin(const Json& id,
                                                      const std::shared_ptr<RpcBatch>& batch,
                                                      bool stream, std::stop_source stop) {
  MutexLock lock(requests_mu_);
  if (closed_) return Admission::kClosed;
  const auto [it, inserted] =
      in_flight_.try_emplace(IdKey(id), InFlight{id, std::move(stop), batch, stream, std::nullopt});
  return inserted ? Admission::kAdmitted : Admission::kDuplicate;
}

JsonRpcConnection::Verdict JsonRpcConnection::Check(const Json& id) const {
  MutexLock lock(requests_mu_);
  auto it = in_flight_.find(IdKey(id));
  if (it == in_flight_.end()) return Verdict{};
  if (!it->second.stop.stop_requested()) return Verdict{true, false, std::nullopt};
  return Verdict{true, true, it->second.replacement};
}

void JsonRpcConnection::End(const Json& id) {
  MutexLock lock(requests_mu_);
  in_flight_.erase(IdKey(id));
  if (in_flight_.empty()) idle_cv_.notify_all();
}

bool JsonRpcConnection::EndStream(const Json& id) {
  MutexLock lock(requests_mu_);
  auto it = in_flight_.find(IdKey(id));
  if (it == in_flight_.end() || !it->second.stream) return false;
  in_flight_.erase(it);
  if (in_flight_.empty()) idle_cv_.notify_all();
  return true;
}

bool JsonRpcConnection::IsInFlight(const Json& id) const {
  MutexLock lock(requests_mu_);
  return in_flight_.count(IdKey(id)) > 0;
}

JsonRpcConnection::Cancelled JsonRpcConnection::Cancel(const Json& id) {
  MutexLock lock(requests_mu_);
  auto it = in_flight_.find(IdKey(id));
  if (it == in_flight_.end()) return Cancelled::kUnknown;  // unknown or already answered
  if (it->second.stream) return Cancelled::kStream;
  it->second.stop.request_stop();
  return Cancelled::kStopped;
}

std::vector<Json> JsonRpcConnection::CancelAll(const std::optional<RpcError>& answer) {
  std::vector<Json> streams;
  MutexLock lock(requests_mu_);
  for (auto& [key, request] : in_flight_) {
    if (request.stream) {
      streams.push_back(request.id);
    } else {
      if (answer && !request.stop.stop_requested()) request.replacement = answer;
      request.stop.request_stop();
    }
  }
  return streams;
}

size_t JsonRpcConnection::InFlightCount() const {
  MutexLock lock(requests_mu_);
  return in_flight_.size();
}

bool JsonRpcConnection::WaitIdle(std::chrono::milliseconds timeout, std::stop_token stop) {
  MutexLock lock(requests_mu_);
  return idle_cv_.wait_for(lock, stop, timeout, [this] {
    requests_mu_.AssertHeld();
    return in_flight_.empty();
  });
}

void JsonRpcConnection::Close() {
  closed_ = true;
  {
    MutexLock lock(requests_mu_);
    std::erase_if(in_flight_, [](auto& item) {
      item.second.stop.request_stop();
      return item.second.stream;
    });
    if (in_flight_.empty()) idle_cv_.notify_all();
  }
  std::map<std::string, std::shared_ptr<PendingCall>> pending;
  {
    MutexLock lock(calls_mu_);
    pending.swap(pending_calls_);
  }
  for (auto& [key, call] : pending) {
    call->Fulfil(MakeError(ErrorCode::kUnavailable, "the connection closed"));
  }
  WriterLock lock(sink_mu_);  // waits for sends in progress
  sink_ = nullptr;
}

}  // namespace imgmcp::mcp
