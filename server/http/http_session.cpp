#include "server/http/http_session.h"

#include <algorithm>
#include <utility>

#include "mcp/json_rpc.h"

namespace imgmcp::http {

// Its fields are guarded by the session's mu_.
struct HttpSession::Exchange {
  bool batch = false;
  std::vector<std::string> keys;            // IdKeys of its requests
  bool sse = false;                         // decided: answering as SSE (else still undecided)
  uint64_t stream = 0;                      // its SSE stream number once sse
  std::vector<std::string> early;           // messages before the decision (compact JSON)
  std::optional<std::string> final_answer;  // the response (or batch answer) before the decision
  std::optional<int> final_error_code;      // of final_answer
  bool final_before_dispatch = false;       // of final_answer
  bool done = false;                        // answered or dropped
  bool close_requested = false;             // CloseRequestStream before/while streaming
  std::shared_ptr<SseChannel> channel;      // where its events go now (nullptr: buffered only)
};

HttpSession::HttpSession(std::string id, SessionOptions options)
    : id_(std::move(id)), options_(options), cv_(options.watch_socket) {}

HttpSession::~HttpSession() {
  if (connection_) connection_->Close();
}

void HttpSession::Attach(std::shared_ptr<mcp::Connection> connection) {
  connection_ = std::move(connection);
}

// --- POST ---------------------------------------------------------------------------------------

std::shared_ptr<HttpSession::Exchange> HttpSession::BeginExchange(
    const std::vector<Json>& request_ids, bool batch, Json* duplicate) {
  auto exchange = std::make_shared<Exchange>();
  exchange->batch = batch;
  for (const Json& id : request_ids) exchange->keys.push_back(mcp::IdKey(id));
  MutexLock lock(mu_);
  for (size_t i = 0; i < exchange->keys.size(); ++i) {
    // An id in progress in this session, or twice in this batch: either way two requests would
    // share the id their answers are matched by.
    const auto before = exchange->keys.begin() + static_cast<std::ptrdiff_t>(i);
    const bool repeated = std::find(exchange->keys.begin(), before, exchange->keys[i]) != before;
    if (!repeated && by_request_.count(exchange->keys[i]) == 0) continue;
    if (duplicate != nullptr) *duplicate = request_ids[i];
    return nullptr;
  }
  for (const std::string& key : exchange->keys) by_request_[key] = exchange;
  return exchange;
}

HttpSession::Answer HttpSession::AwaitAnswer(
    const std::shared_ptr<Exchange>& exchange,
    std::optional<std::chrono::milliseconds> stream_after) {
  MutexLock lock(mu_);
  auto answerable = [&] {
    mu_.AssertHeld();
    return closed_ || exchange->done || !exchange->early.empty() || exchange->close_requested;
  };
  HangupAwareCondition::Deadline deadline;
  if (stream_after) deadline = std::chrono::steady_clock::now() + *stream_after;
  Answer answer;
  if (cv_.Wait(mu_, deadline, answerable) == HangupAwareCondition::Wake::kHangup) {
    answer.client_gone = true;
    return answer;
  }
  if (closed_ && !exchange->done) {
    answer.session_closed = true;
    return answer;
  }
  if (exchange->early.empty() && exchange->final_answer && !exchange->close_requested) {
    answer.json = std::move(*exchange->final_answer);
    answer.error_code = exchange->final_error_code;
    answer.rejected_before_dispatch = exchange->final_before_dispatch;
    return answer;
  }
  // Answer as a stream: priming event (resumable sessions), whatever came early, then live
  // events.
  exchange->sse = true;
  exchange->stream = next_stream_++;
  auto channel = std::make_shared<SseChannel>(options_.watch_socket);
  if (options_.resumable) {
    channel->Push(PrimingFrame(FormatEventId({next_seq_++, exchange->stream}), options_.sse_retry));
  }
  for (const std::string& text : exchange->early) {
    channel->Push(AppendEventLocked(exchange->stream, text));
  }
  exchange->early.clear();
  if (exchange->final_answer) {
    channel->Push(AppendEventLocked(exchange->stream, *exchange->final_answer));
    exchange->final_answer.reset();
  }
  if (exchange->done || exchange->close_requested) {
    channel->Finish();
  } else {
    exchange->channel = channel;
  }
  if (!exchange->done) live_streams_[exchange->stream] = exchange;
  answer.sse = std::move(channel);
  return answer;
}

// --- GET ----------------------------------------------------------------------------------------

std::shared_ptr<SseChannel> HttpSession::OpenStandaloneStream() {
  auto channel = std::make_shared<SseChannel>();
  std::shared_ptr<SseChannel> replaced;
  {
    MutexLock lock(mu_);
    if (closed_) return nullptr;
    if (options_.resumable) {
      channel->Push(PrimingFrame(FormatEventId({next_seq_++, 0}), options_.sse_retry));
    }
    replaced = std::exchange(standalone_, channel);
  }
  if (replaced) replaced->Finish();
  return channel;
}

std::shared_ptr<SseChannel> HttpSession::Resume(EventId last) {
  auto channel = std::make_shared<SseChannel>();
  std::shared_ptr<SseChannel> replaced;
  {
    MutexLock lock(mu_);
    if (closed_) return nullptr;
    for (const StoredEvent& event : events_) {
      if (event.stream == last.stream && event.seq > last.seq) channel->Push(event.frame);
    }
    if (last.stream == 0) {
      replaced = std::exchange(standalone_, channel);
    } else if (auto it = live_streams_.find(last.stream); it != live_streams_.end()) {
      it->second->close_requested = false;
      replaced = std::exchange(it->second->channel, channel);
    } else {
      channel->Finish();  // that request is over: what was kept has been replayed
    }
  }
  if (replaced) replaced->Finish();
  return channel;
}

void HttpSession::Detach(const std::shared_ptr<SseChannel>& channel) {
  MutexLock lock(mu_);
  if (standalone_ == channel) standalone_.reset();
  for (auto& [stream, exchange] : live_streams_) {
    if (exchange->channel == channel) exchange->channel.reset();
  }
}

void HttpSession::CloseRequestStream(const Json& request_id) {
  MutexLock lock(mu_);
  auto it = by_request_.find(mcp::IdKey(request_id));
  if (it == by_request_.end()) return;
  const std::shared_ptr<Exchange>& exchange = it->second;
  exchange->close_requested = true;
  if (exchange->channel) {
    exchange->channel->Finish();
    exchange->channel.reset();
  }
  cv_.NotifyAll();
}

// --- lifecycle ----------------------------------------------------------------------------------

void HttpSession::End() {
  // Close first and without mu_: Close waits for sends in progress, which take mu_.
  if (connection_) connection_->Close();
  std::vector<std::shared_ptr<SseChannel>> channels;
  {
    MutexLock lock(mu_);
    if (closed_) return;
    closed_ = true;
    if (standalone_) channels.push_back(std::move(standalone_));
    for (auto& [stream, exchange] : live_streams_) {
      if (exchange->channel) channels.push_back(std::move(exchange->channel));
    }
    live_streams_.clear();
    by_request_.clear();
  }
  cv_.NotifyAll();
  for (const auto& channel : channels) channel->Finish();
}

bool HttpSession::Busy() const {
  {
    MutexLock lock(mu_);
    if (closed_) return false;
    if (standalone_ || !live_streams_.empty() || !by_request_.empty()) return true;
  }
  return connection_ && connection_->InFlightCount() > 0;
}

// --- MessageSink --------------------------------------------------------------------------------

void HttpSession::Send(mcp::OutgoingMessage message) {
  using Kind = mcp::OutgoingMessage::Kind;
  MutexLock lock(mu_);
  if (closed_) return;
  std::shared_ptr<Exchange> exchange;
  if (message.related_request_id) {
    auto it = by_request_.find(mcp::IdKey(*message.related_request_id));
    if (it != by_request_.end()) exchange = it->second;
  }
  if (!exchange) {  // belongs to no open request: the standalone stream
    std::string frame = AppendEventLocked(0, message.json);
    if (standalone_) standalone_->Push(frame);
    return;
  }
  const bool final_answer =
      exchange->batch ? message.kind == Kind::kBatchAnswer : message.kind == Kind::kResponse;
  if (!exchange->sse) {
    if (final_answer) {
      exchange->final_answer = std::move(message.json);
      exchange->final_error_code = message.error_code;
      exchange->final_before_dispatch = message.rejected_before_dispatch;
      FinishExchangeLocked(exchange);
    } else {
      exchange->early.push_back(std::move(message.json));
    }
    cv_.NotifyAll();
    return;
  }
  std::string frame = AppendEventLocked(exchange->stream, message.json);
  if (exchange->channel) exchange->channel->Push(frame);
  if (final_answer) FinishExchangeLocked(exchange);
}

void HttpSession::OnRequestDropped(const Json& request_id) {
  MutexLock lock(mu_);
  auto it = by_request_.find(mcp::IdKey(request_id));
  if (it == by_request_.end()) return;
  std::shared_ptr<Exchange> exchange = it->second;
  FinishExchangeLocked(exchange);
  cv_.NotifyAll();
}

// --- private ------------------------------------------------------------------------------------

std::string HttpSession::AppendEventLocked(uint64_t stream, const std::string& json) {
  if (!options_.resumable) return MessageFrame("", json);
  const uint64_t seq = next_seq_++;
  std::string frame = MessageFrame(FormatEventId({seq, stream}), json);
  events_bytes_ += frame.size();
  events_.push_back(StoredEvent{seq, stream, frame});
  while (events_.size() > 1 && (events_.size() > options_.replay_max_events ||
                                events_bytes_ > options_.replay_max_bytes)) {
    events_bytes_ -= events_.front().frame.size();
    events_.pop_front();
  }
  return frame;
}

void HttpSession::FinishExchangeLocked(const std::shared_ptr<Exchange>& exchange) {
  exchange->done = true;
  for (const std::string& key : exchange->keys) {
    auto it = by_request_.find(key);
    if (it != by_request_.end() && it->second == exchange) by_request_.erase(it);
  }
  if (exchange->sse) {
    live_streams_.erase(exchange->stream);
    if (exchange->channel) {
      exchange->channel->Finish();
      exchange->channel.reset();
    }
  }
}

}  // namespace imgmcp::http
