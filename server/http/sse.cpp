#include "server/http/sse.h"

#include "common/decimal.h"

namespace imgmcp::http {

std::string FormatEventId(EventId id) {
  return std::to_string(id.seq) + "_" + std::to_string(id.stream);
}

std::optional<EventId> ParseEventId(std::string_view text) {
  const size_t sep = text.find('_');
  if (sep == std::string_view::npos || sep == 0 || sep + 1 >= text.size()) return std::nullopt;
  const std::optional<uint64_t> seq = ParseDecimal<uint64_t>(text.substr(0, sep));
  const std::optional<uint64_t> stream = ParseDecimal<uint64_t>(text.substr(sep + 1));
  if (!seq || !stream) return std::nullopt;
  return EventId{*seq, *stream};
}

std::string PrimingFrame(std::string_view id, std::chrono::milliseconds retry) {
  std::string frame;
  frame.reserve(id.size() + 40);
  frame.append("id: ").append(id).append("\nretry: ").append(std::to_string(retry.count()));
  frame.append("\ndata: \n\n");
  return frame;
}

std::string RetryFrame(std::chrono::milliseconds retry) {
  return "retry: " + std::to_string(retry.count()) + "\n\n";
}

std::string MessageFrame(std::string_view id, std::string_view json) {
  std::string frame;
  frame.reserve(json.size() + id.size() + 32);
  frame.append("event: message\n");
  if (!id.empty()) frame.append("id: ").append(id).append("\n");
  frame.append("data: ").append(json).append("\n\n");
  return frame;
}

std::string CommentFrame(std::string_view text) {
  return std::string(": ").append(text).append("\n\n");
}

void SseChannel::Push(const std::string& frame) {
  {
    MutexLock lock(mu_);
    if (finished_ || aborted_) return;
    queued_.append(frame);
  }
  cv_.NotifyAll();
}

void SseChannel::Finish() {
  {
    MutexLock lock(mu_);
    finished_ = true;
  }
  cv_.NotifyAll();
}

void SseChannel::Abort() {
  {
    MutexLock lock(mu_);
    aborted_ = true;
    queued_.clear();
  }
  cv_.NotifyAll();
}

SseChannel::PullResult SseChannel::Pull(std::string* out, std::chrono::milliseconds timeout) {
  MutexLock lock(mu_);
  const auto wake = cv_.Wait(mu_, std::chrono::steady_clock::now() + timeout, [this] {
    mu_.AssertHeld();
    return aborted_ || finished_ || !queued_.empty();
  });
  if (aborted_) return PullResult::kAborted;
  if (wake == HangupAwareCondition::Wake::kHangup) return PullResult::kHangup;
  if (!queued_.empty()) {
    out->swap(queued_);
    queued_.clear();
    return PullResult::kData;
  }
  return finished_ ? PullResult::kEnd : PullResult::kTimeout;
}

bool SseChannel::aborted() const {
  MutexLock lock(mu_);
  return aborted_;
}

}  // namespace imgmcp::http
