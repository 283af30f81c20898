// The accept side of the HTTP transport. One thread accepts connections and holds each one —
// without a worker thread — until its request head has fully arrived, then hands it to a worker.
// A connection that has not sent a whole head within `header_timeout` (in total, however slowly
// it trickles) is answered 408 and closed; when more than `max_pending` connections wait, the
// one waiting longest is closed. So connections that send part of a head, or nothing, cost a file
// descriptor and a few bytes each, never a worker: they cannot starve real clients, with a token
// or without. Between requests a keep-alive connection waits here too (up to `keep_alive_timeout`),
// not on a worker.
//
// The gate reads the head into the connection's buffer (GateConnection::buffer); the worker
// serves the request from that buffer first, then from the socket. It also refuses, before any
// worker sees the request, a Content-Length above `max_body_bytes` (413) and a head above
// `max_head_bytes` (431). After a final answer a connection lingers here (write side shut, input
// drained and discarded) for up to `linger`, so the client reads the answer instead of a reset.
//
// Linux (epoll, eventfd). No httplib: the HTTP knowledge here is finding a head's end and its
// Content-Length.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/thread_annotations.h"
#include "common/unique_fd.h"
#include "metrics/metrics.h"

namespace imgmcp::http {

struct GateOptions {
  std::chrono::milliseconds header_timeout{10'000};     // to send a whole head, from the first byte
  std::chrono::milliseconds keep_alive_timeout{2'000};  // idle time allowed between requests
  std::chrono::milliseconds linger{2'000};              // draining after a final answer
  size_t max_pending = 512;            // connections waiting for a head (or lingering)
  size_t max_head_bytes = 32 << 10;    // request line + headers
  uint64_t max_body_bytes = 96 << 20;  // a larger Content-Length is refused (413) at once
  bool tcp_nodelay = true;
  // The body of the gate's own refusals (408, 413, 431), sent as application/json.
  std::function<std::string(int status)> refusal_body;
  // Counts refusals by status and closed waiters as "overflow" (may be null; must outlive it).
  metrics::Metrics* metrics = nullptr;
};

// A client connection between the gate and a worker: its socket and what was read ahead.
struct GateConnection {
  UniqueFd fd;            // closed with the connection
  std::string buffer;     // received, not yet consumed by a request (a head, maybe more)
  size_t head_bytes = 0;  // while a worker has it: the request head's length at buffer's front
  uint64_t content_length = 0;  // while a worker has it: the body length the head declares
  bool chunked = false;         // while a worker has it: the body is chunked
  // Given back by a worker: body bytes its request left unread (a handler that answered
  // without reading, e.g. 401), which the gate discards before looking for the next head.
  uint64_t skip = 0;
  size_t requests = 0;  // requests served on this connection so far
  // The two ends' addresses, looked up for the connection's first request (httplib asks for
  // them on every request).
  struct Address {
    std::string ip;
    int port = -1;  // -1: not looked up yet
  };
  Address remote, local;
};

// Where a request head ends and what it declares, from the bytes received so far.
struct HeadScan {
  enum class State { kIncomplete, kComplete, kTooLarge };
  State state = State::kIncomplete;
  size_t head_bytes = 0;                   // with kComplete: up to and including the blank line
  std::optional<uint64_t> content_length;  // with kComplete, when declared (saturates)
  bool chunked = false;  // Transfer-Encoding present (then Content-Length is moot)
};
// `searched`: a prefix already known to hold no blank line (so a trickled head is scanned once).
HeadScan ScanRequestHead(std::string_view bytes, size_t max_head_bytes, size_t searched = 0);

struct GateStats {
  uint64_t accepted = 0;
  uint64_t handed_off = 0;  // requests the gate gave to workers (not those a worker read itself)
  uint64_t timed_out = 0;   // heads not complete by the deadline (408)
  uint64_t evicted = 0;     // closed because too many connections waited
  uint64_t refused = 0;     // 413 and 431 from the gate
  size_t waiting = 0;       // now: connections waiting for a head or idle between requests
};

class ConnectionGate {
 public:
  using Handoff = std::function<void(std::unique_ptr<GateConnection>)>;

  // `listen_fd` is a bound, listening socket; the gate makes it non-blocking and does not own it.
  // `handoff` runs on the gate thread and must not block (it queues the connection for a worker).
  static Result<std::unique_ptr<ConnectionGate>> Create(int listen_fd, GateOptions options,
                                                        Handoff handoff);
  ~ConnectionGate();  // closes every connection still here; call after Run() returned
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  // The gate loop, on the calling thread, until Stop().
  void Run();
  // Ends Run() promptly. Thread-safe, idempotent.
  void Stop();

  // From a worker, after an answer on a keep-alive connection: wait for the next request head.
  void Return(std::unique_ptr<GateConnection> connection);
  // From a worker, after the last answer on a connection: linger, then close.
  void Finish(std::unique_ptr<GateConnection> connection);

  GateStats Stats() const;

 private:
  enum class Phase { kHead, kIdle, kLinger };
  struct Entry {
    std::unique_ptr<GateConnection> connection;
    Phase phase = Phase::kHead;
    std::chrono::steady_clock::time_point deadline;
    uint64_t order = 0;  // admission order: the smallest is evicted first
    size_t scanned = 0;  // head bytes already searched for the blank line
  };
  struct Inbound {
    std::unique_ptr<GateConnection> connection;
    bool finish = false;
  };

  ConnectionGate(int listen_fd, UniqueFd epoll_fd, UniqueFd wake_fd, GateOptions options,
                 Handoff handoff);

  void AcceptAll();
  void Admit(std::unique_ptr<GateConnection> connection, Phase phase);
  void OnReadable(int fd);
  void ReadHead(Entry& entry);
  void Drain(int fd);
  void TakeInbound();
  void ExpireDeadlines();
  void EvictOldest();
  void Refuse(int fd, int status);
  void StartLinger(int fd);
  void SetDeadline(Entry& entry, std::chrono::steady_clock::time_point deadline);
  void Dispatch(int fd, const HeadScan& scan);
  // Discards what is left of a previous request's body; false when the connection was closed.
  bool SkipLeftover(Entry& entry);
  void Close(int fd);
  std::unique_ptr<GateConnection> Detach(int fd);
  int NextTimeoutMs() const;
  void PostInbound(Inbound inbound);
  void Wake();

  const int listen_fd_;
  const UniqueFd epoll_fd_;
  const UniqueFd wake_fd_;
  const GateOptions options_;
  const Handoff handoff_;

  // Owned by the gate thread (Run) only.
  std::unordered_map<int, Entry> entries_;  // by fd
  std::set<std::pair<std::chrono::steady_clock::time_point, int>> deadlines_;
  std::set<std::pair<uint64_t, int>> admission_;  // (order, fd)
  uint64_t next_order_ = 0;
  bool accept_paused_ = false;
  std::chrono::steady_clock::time_point accept_resume_;
  std::chrono::steady_clock::time_point last_eviction_warning_;

  mutable Mutex inbox_mu_;  // guards inbox_, stopped_
  std::vector<Inbound> inbox_ GUARDED_BY(inbox_mu_);
  bool stopped_ GUARDED_BY(inbox_mu_) = false;

  std::atomic<bool> stop_requested_{false};
  std::atomic<uint64_t> accepted_{0}, handed_off_{0}, timed_out_{0}, evicted_{0}, refused_{0};
  std::atomic<size_t> waiting_{0};
};

}  // namespace imgmcp::http
