// An in-memory MessageSink: records every outgoing message and lets a caller wait for one. For
// the self-check and for tests of anything built on the core.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <optional>
#include <vector>

#include "common/json.h"
#include "common/thread_annotations.h"
#include "mcp/message_sink.h"

namespace imgmcp::mcp {

class MemorySink final : public MessageSink {
 public:
  struct Sent {
    Json message;  // parsed back from the text the core wrote
    std::optional<Json> related_request_id;
    OutgoingMessage::Kind kind = OutgoingMessage::Kind::kNotification;
    std::optional<int> error_code;
    bool rejected_before_dispatch = false;
  };

  // `caller_awaits_answers`: what CallerAwaitsAnswers() says (true to act like an HTTP POST).
  explicit MemorySink(bool caller_awaits_answers = false)
      : caller_awaits_answers_(caller_awaits_answers) {}

  void Send(OutgoingMessage message) override;
  void OnRequestDropped(const Json& request_id) override;
  bool CallerAwaitsAnswers() const override { return caller_awaits_answers_; }

  // The first recorded message matching `predicate`, waiting up to `timeout` for it.
  std::optional<Json> WaitFor(const std::function<bool(const Json&)>& predicate,
                              std::chrono::milliseconds timeout);
  // The response (result or error) to request `id`.
  std::optional<Json> WaitForResponse(const Json& id, std::chrono::milliseconds timeout);
  // Waits until OnRequestDropped(id) was called.
  bool WaitForDropped(const Json& id, std::chrono::milliseconds timeout);

  std::vector<Sent> Messages() const;
  std::vector<Json> Dropped() const;

 private:
  const bool caller_awaits_answers_;
  mutable Mutex mu_;  // guards sent_ and dropped_
  std::condition_variable_any cv_;
  std::vector<Sent> sent_ GUARDED_BY(mu_);
  std::vector<Json> dropped_ GUARDED_BY(mu_);
};

}  // namespace imgmcp::mcp
