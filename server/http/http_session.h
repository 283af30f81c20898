// One Streamable HTTP session (one Mcp-Session-Id), or one modern (2026-07-28) request, which
// has no session: the MessageSink of its mcp::Connection. It routes every outgoing message to
// the HTTP response it belongs to (Streamable HTTP, 2025-11-25 basic/transports), by the message's
// kind and related request:
// - a message related to a request goes to the answer of the POST that carried that request —
//   as that POST's JSON body when it is the only message, else as an event of its SSE stream;
// - messages related to no request go to the session's standalone GET stream.
// A legacy session is resumable: every SSE event gets an id ("<seq>_<stream>", see sse.h) and is
// kept in a bounded replay buffer, so a client that lost a stream resumes it with GET +
// Last-Event-ID, and a client disconnecting never cancels anything. A modern request's stream is
// not (no priming event, no ids; the transport cancels the request when its stream closes).
//
// Threading: Send/OnRequestDropped come from any thread (worker pool, HTTP threads); POST/GET
// handlers call BeginExchange/AwaitAnswer/Resume on their HTTP threads. One mutex guards the
// routing state; it is never held during network I/O (SseChannel queues the bytes, the
// connection's own thread writes them) nor while calling into the Connection.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/thread_annotations.h"
#include "mcp/connection.h"
#include "mcp/message_sink.h"
#include "server/http/hangup_watch.h"
#include "server/http/sse.h"

namespace imgmcp::http {

struct SessionOptions {
  bool resumable = true;                       // event ids, priming events and replay (legacy)
  std::chrono::milliseconds sse_retry{1000};   // the priming event's `retry:`
  size_t replay_max_events = 1024;             // replay buffer bounds (oldest events go first;
  size_t replay_max_bytes = size_t{16} << 20;  // the newest event is always kept)
  // A modern request's client connection: waiting for its answer (and streaming it) ends when
  // that client hangs up (hangup_watch.h). -1: none (a legacy session outlives its connections).
  int watch_socket = -1;
};

class HttpSession final : public mcp::MessageSink {
 public:
  // The answer to one POST that carried requests.
  struct Exchange;
  struct Answer {
    std::optional<std::string> json;  // answer with this application/json body, or
    std::shared_ptr<SseChannel> sse;  // stream this channel as text/event-stream, or
    bool session_closed = false;      // the session ended first (answer 404)
    bool client_gone = false;         // the watched client hung up first (answer nobody)
    // A JSON answer that is an error: its code, and whether the core refused the request before
    // dispatching it (OutgoingMessage).
    std::optional<int> error_code;
    bool rejected_before_dispatch = false;
  };

  HttpSession(std::string id, SessionOptions options);
  ~HttpSession() override;  // closes the connection
  HttpSession(const HttpSession&) = delete;
  HttpSession& operator=(const HttpSession&) = delete;

  // Set once, right after McpServer::Connect(*this).
  void Attach(std::shared_ptr<mcp::Connection> connection);
  const std::string& id() const { return id_; }
  // Whose session this is (McpRoutes: the digest of the credentials that opened it, "" without
  // any); a request with other credentials is told the session does not exist. Set once, before
  // the session is shared.
  void SetOwner(std::string owner) { owner_ = std::move(owner); }
  const std::string& owner() const { return owner_; }
  mcp::Connection& connection() { return *connection_; }

  // --- POST ---------------------------------------------------------------------------------
  // Registers the requests of one POST body (their ids) before the body goes to the connection.
  // nullptr when one of the ids belongs to a request still in progress in this session, or comes
  // twice in the batch (that id goes to *duplicate, when given).
  std::shared_ptr<Exchange> BeginExchange(const std::vector<Json>& request_ids, bool batch,
                                          Json* duplicate = nullptr);
  // Blocks until the POST can be answered: the final answer alone → JSON; anything before it
  // (progress, logs, a server→client request) → SSE. With `stream_after` it waits at most that
  // long and then answers as SSE (priming event first), so a slow call's client learns at once
  // where to resume; without, it waits for the first message. With a watched socket it also ends
  // when that client hangs up (client_gone).
  Answer AwaitAnswer(const std::shared_ptr<Exchange>& exchange,
                     std::optional<std::chrono::milliseconds> stream_after);

  // --- GET ----------------------------------------------------------------------------------
  // A new standalone stream (replacing an older one). nullptr after End().
  std::shared_ptr<SseChannel> OpenStandaloneStream();
  // Resumes the stream `last` belongs to: replays its later events still buffered, then keeps
  // delivering that stream's new events on the returned channel (or ends it when that request
  // is already over). nullptr after End().
  std::shared_ptr<SseChannel> Resume(EventId last);
  // The HTTP response carrying `channel` ended (done, peer gone, or replaced).
  void Detach(const std::shared_ptr<SseChannel>& channel);

  // Ends the SSE stream of a running request without ending the request (SEP-1699 polling): the
  // client reconnects with Last-Event-ID and gets the rest. No-op for unknown or finished ones.
  void CloseRequestStream(const Json& request_id) override;
  // POST handlers block in AwaitAnswer right after handing their body to the connection.
  bool CallerAwaitsAnswers() const override { return true; }

  // DELETE, expiry or shutdown: closes the connection (cancelling its calls and pending
  // server→client requests), ends every stream and wakes waiting POSTs. Idempotent.
  void End();
  // An open stream, a POST waiting for its answer, or a call in flight.
  bool Busy() const;

  // --- mcp::MessageSink -----------------------------------------------------------------------
  void Send(mcp::OutgoingMessage message) override;
  void OnRequestDropped(const Json& request_id) override;

 private:
  struct StoredEvent {
    uint64_t seq;
    uint64_t stream;
    std::string frame;
  };

  // The following require mu_.
  std::string AppendEventLocked(uint64_t stream, const std::string& json) REQUIRES(mu_);
  void FinishExchangeLocked(const std::shared_ptr<Exchange>& exchange) REQUIRES(mu_);

  const std::string id_;
  std::string owner_;
  const SessionOptions options_;
  std::shared_ptr<mcp::Connection> connection_;  // set by Attach, then read-only

  // Guards every field below, and every Exchange's (which the analysis cannot check: it names
  // no mutex of another object).
  mutable Mutex mu_;
  HangupAwareCondition cv_;  // an exchange changed state, or the session closed
  bool closed_ GUARDED_BY(mu_) = false;
  uint64_t next_seq_ GUARDED_BY(mu_) = 1;
  uint64_t next_stream_ GUARDED_BY(mu_) = 1;        // 0 is the standalone stream
  std::deque<StoredEvent> events_ GUARDED_BY(mu_);  // the replay buffer, oldest first
  size_t events_bytes_ GUARDED_BY(mu_) = 0;
  // IdKey → unfinished exchange.
  std::map<std::string, std::shared_ptr<Exchange>> by_request_ GUARDED_BY(mu_);
  // SSE exchanges not finished.
  std::map<uint64_t, std::shared_ptr<Exchange>> live_streams_ GUARDED_BY(mu_);
  std::shared_ptr<SseChannel> standalone_ GUARDED_BY(mu_);  // the GET stream, if open
};

}  // namespace imgmcp::http
