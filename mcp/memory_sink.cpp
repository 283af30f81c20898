#include "mcp/memory_sink.h"

#include <algorithm>

namespace imgmcp::mcp {

void MemorySink::Send(OutgoingMessage message) {
  // A test sink: it reads back what the core wrote, to let tests look at it.
  Sent sent{Json::parse(message.json), message.related_request_id, message.kind, message.error_code,
            message.rejected_before_dispatch};
  {
    MutexLock lock(mu_);
    sent_.push_back(std::move(sent));
  }
  cv_.notify_all();
}

void MemorySink::OnRequestDropped(const Json& request_id) {
  {
    MutexLock lock(mu_);
    dropped_.push_back(request_id);
  }
  cv_.notify_all();
}

std::optional<Json> MemorySink::WaitFor(const std::function<bool(const Json&)>& predicate,
                                        std::chrono::milliseconds timeout) {
  MutexLock lock(mu_);
  std::optional<Json> found;
  cv_.wait_for(lock, timeout, [&] {
    mu_.AssertHeld();
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
  MutexLock lock(mu_);
  std::optional<Json> found;
  cv_.wait_for(lock, timeout, [&] {
    mu_.AssertHeld();
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
  MutexLock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] {
    mu_.AssertHeld();
    return std::find(dropped_.begin(), dropped_.end(), id) != dropped_.end();
  });
}

std::vector<MemorySink::Sent> MemorySink::Messages() const {
  MutexLock lock(mu_);
  return sent_;
}

std::vector<Json> MemorySink::Dropped() const {
  MutexLock lock(mu_);
  return dropped_;
}

}  // namespace imgmcp::mcp
