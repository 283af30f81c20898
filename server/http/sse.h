// Server-Sent Events for the Streamable HTTP transport: event ids, frame formatting and the
// per-response queue a connection thread drains (a priming event first, then
// `event: message` / `id:` / `data:` frames).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/thread_annotations.h"
#include "server/http/hangup_watch.h"

namespace imgmcp::http {

// An event id names its position in the session's event sequence and the logical stream it
// belongs to (0 = the session's standalone GET stream; n > 0 = the SSE answer to one POST), so a
// client resuming with Last-Event-ID gets the rest of exactly that stream. Text form:
// "<seq>_<stream>".
struct EventId {
  uint64_t seq = 0;
  uint64_t stream = 0;
};
std::string FormatEventId(EventId id);
std::optional<EventId> ParseEventId(std::string_view text);

// "id: <id>\nretry: <ms>\ndata: \n\n" — tells the client where it is and how soon to reconnect.
std::string PrimingFrame(std::string_view id, std::chrono::milliseconds retry);
// "retry: <ms>\n\n" — no event, only how soon to reconnect: the last frame of a stream a stopping
// server closes, so its client reconnects promptly (behind a proxy, to another replica).
std::string RetryFrame(std::chrono::milliseconds retry);
// "event: message\nid: <id>\ndata: <json>\n\n" (no id line when `id` is empty). `json` is one
// compact JSON text (no newlines).
std::string MessageFrame(std::string_view id, std::string_view json);
// ": <text>\n\n" — a comment clients ignore; used as a keep-alive that also detects dead peers.
std::string CommentFrame(std::string_view text);

// The bytes waiting to be written on one HTTP response. Producers (MessageSink::Send on any
// thread) append without touching the socket; the connection's own thread pulls and writes, so no
// lock is ever held during network I/O. A channel given its client's socket also ends a Pull when
// that client hangs up (hangup_watch.h), so a modern request's stream notices a closed connection
// at once rather than at the next keep-alive.
class SseChannel {
 public:
  enum class PullResult {
    kData,     // *out holds everything queued so far
    kTimeout,  // nothing arrived in time (send a keep-alive)
    kEnd,      // Finish() was called and everything queued has been pulled: end the response
    kAborted,  // Abort() was called: drop the connection now
    kHangup,   // the watched client closed its connection: drop it now
  };

  // `watch_socket`: the client connection whose hang-up ends a Pull (kHangup); -1 for none.
  explicit SseChannel(int watch_socket = -1) : cv_(watch_socket) {}

  void Push(const std::string& frame);
  // Ends the response once everything pushed so far has been pulled. Idempotent.
  void Finish();
  // Ends the response at once; queued bytes are dropped. Idempotent.
  void Abort();
  PullResult Pull(std::string* out, std::chrono::milliseconds timeout);
  bool aborted() const;

 private:
  mutable Mutex mu_;  // guards queued_, finished_, aborted_
  HangupAwareCondition cv_;
  std::string queued_ GUARDED_BY(mu_);
  bool finished_ GUARDED_BY(mu_) = false;
  bool aborted_ GUARDED_BY(mu_) = false;
};

}  // namespace imgmcp::http
