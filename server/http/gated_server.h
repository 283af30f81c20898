// httplib::Server served through a ConnectionGate instead of httplib's own accept loop (which
// gives every accepted connection a pool thread before it has sent anything, and lets a second
// server bind the same port through SO_REUSEPORT).
//
// GatedServer binds its own listening socket (SO_REUSEADDR only: a port in use is an error), runs
// the gate on the thread that calls Serve(), and `workers` threads that each serve one complete
// request at a time with httplib's request processing (routes, handlers and responses are plain
// httplib). Between requests a keep-alive connection goes back to the gate. A request reads at
// most its head, `payload_max_length` body bytes and a small allowance for chunked framing; past
// that its reads fail and the connection is closed, whatever the route.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "common/thread_annotations.h"
#include "common/unique_fd.h"
#include "server/http/connection_gate.h"
#include "server/http/request_head.h"
#include "server/oauth/principal.h"

namespace imgmcp::http {

// What the worker serving a request has beyond httplib's Request: the head exactly as it was
// received, with the headers imgmcp reads (httplib percent-decodes header values; see
// request_head.h), and the connection's socket (to notice a client that hangs up while its answer
// is being prepared). GatedServer sets it on the worker thread for as long as httplib handles the
// request: routing, handlers and content providers all run there.
struct ServedRequest {
  std::string_view head;
  RequestHeaders headers;
  int socket = -1;
  // Set by the routes' checks before routing (OAuthGate): who sent it, with OAuth on.
  mutable std::optional<oauth::Principal> principal;
};
// The request the calling thread is serving; nullptr outside a GatedServer's request.
const ServedRequest* CurrentRequest();

class GatedServer : public httplib::Server {
 public:
  GatedServer();
  ~GatedServer() override;  // Shutdown(); the thread in Serve() must have returned
  GatedServer(const GatedServer&) = delete;
  GatedServer& operator=(const GatedServer&) = delete;

  // Binds host:port (port 0 = OS-chosen) and listens. Returns the bound port; an error naming
  // the cause (e.g. "Address already in use") otherwise.
  Result<int> Bind(const std::string& host, int port);
  // Serves on the calling thread (the gate) and `workers` threads until Shutdown(), calling
  // `on_serving` (when given) once it accepts connections. The keep-alive timeout and body limit
  // come from this server's httplib settings. False when it could not start or the gate failed.
  bool Serve(GateOptions options, size_t workers, const std::function<void()>& on_serving = {});
  // Stops accepting, ends waiting reads and writes and streaming responses, and makes Serve()
  // return once the workers finished. Thread-safe, idempotent, also before Serve().
  void Shutdown();
  GateStats gate_stats() const;

 private:
  void WorkerLoop();
  // Serves the connection's requests while the next head comes promptly; then hands it back to
  // `gate` (to wait for its next request, or to linger and close).
  void ServeConnection(ConnectionGate& gate, std::unique_ptr<GateConnection> connection);
  // Serves the request whose head is at the front of connection.buffer. True when the
  // connection may carry another request.
  bool ServeRequest(GateConnection& connection);
  // Waits up to kNextHeadWait for the connection's next request head, woken by its bytes (or by
  // Shutdown()): true when a whole head the gate would hand over is in connection.buffer; false
  // leaves the connection, with what was read, to the gate.
  bool AwaitNextHead(GateConnection& connection);
  // Appends the bytes that arrive by `deadline`; false at its end, end of input or an error.
  bool ReadMore(GateConnection& connection, std::chrono::steady_clock::time_point deadline);
  void Enqueue(std::unique_ptr<GateConnection> connection);

  UniqueFd listen_fd_;
  const UniqueFd stop_fd_;  // an eventfd readable from Shutdown() on: wakes every waiting stream

  size_t max_head_bytes_ = 0;  // the gate's limit, set by Serve() before the workers start

  mutable Mutex mu_;  // guards queue_, shutting_down_, idle_workers_, gate_ (the pointer)
  std::condition_variable_any cv_;
  // Complete heads waiting for a worker.
  std::deque<std::unique_ptr<GateConnection>> queue_ GUARDED_BY(mu_);
  bool shutting_down_ GUARDED_BY(mu_) = false;
  size_t idle_workers_ GUARDED_BY(mu_) = 0;  // workers waiting for a connection
  // Set and reset by Serve(); workers run only meanwhile, each reading it (under mu_) with the
  // connection it takes.
  std::unique_ptr<ConnectionGate> gate_ GUARDED_BY(mu_);
  std::vector<std::thread> workers_;  // touched by Serve() only
};

// How reading a request body through a ContentReader ended.
enum class BodyRead { kOk, kTooLarge, kUnreadable };
// Reads the body of the request with `headers` into `body`, stopping as soon as it would exceed
// `max_bytes` (chunked, length-less and compressed bodies included): at most `max_bytes` are ever
// buffered. kUnreadable: the client sent malformed framing, stopped sending, or hung up.
BodyRead ReadCappedBody(const RequestHeaders& headers, const httplib::ContentReader& reader,
                        size_t max_bytes, std::string* body);

}  // namespace imgmcp::http
