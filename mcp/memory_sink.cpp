#include "mcp/memory_sink.h"

#include <algorithm>

namespace imgmcp::mcp {

void MemorySink::Send(OutgoingMessage message) {
  // A test sink: it reads back what the core wrote, to let tests look at it.
  Sent sent{Json::parse(message.json), message.related_request_id, message.kind, message.error_code,
            message.rejected_before_dispatch};
  {
    std::lock_guard<std::mutex> lock(mu_);
    sent_.push_back(std::move(sent));
  }
  cv_.notify_all();
}

void MemorySink::OnRequestDropped(const Json& request_id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    dropped_.push_back(request_id);
  }
  cv_.notify_all();
}

std::optional<Json> MemorySink::WaitFor(const std::function<bool(const Json&)>& predicate,
                                        std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<Json> found;
  cv_.wait_for(lock, timeout, [&] {
    for (const Sent& s : sent_) {
      if (predicate(s.message)) {
        found = s.message;
        return true;
      }
    }
    return false;
  });
  return found;
}

std::optional<Json> MemorySink::WaitForResponse(const Json& id, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<Json> found;
  cv_.wait_for(lock, timeout, [&] {
    for (const Sent& s : sent_) {
      if (s.kind == OutgoingMessage::Kind::kResponse && s.related_request_id == id) {
        found = s.message;
        return true;
      }
    }
    return false;
  });
  return found;
}

bool MemorySink::WaitForDropped(const Json& id, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] {
    return std::find(dropped_.begin(), dropped_.end(), id) != dropped_.end();
  });
}

std::vector<MemorySink::Sent> MemorySink::Messages() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sent_;
}

std::vector<Json> MemorySink::Dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

}  // namespace imgmcp::mcp
