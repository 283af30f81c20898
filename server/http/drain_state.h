// DrainState: what a draining replica (SIGTERM/SIGINT; server/app/drain.h) needs of the routes —
// the /readyz verdict turns to 503, new calls can be refused, and the drain can see when the last
// request arrived and how many POSTs to /mcp are still being answered, and be woken (idle_fd)
// when that number drops to 0. Lock-free; shared by the transport (which owns it) and its routes.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>

#include "common/unique_fd.h"

namespace imgmcp::http {

class DrainState {
 public:
  using Clock = std::chrono::steady_clock;

  DrainState();

  // /readyz answers 503 "draining" from now on; everything else is served as before.
  void BeginDrain() { draining_.store(true); }
  bool draining() const { return draining_.load(); }
  // POSTs to /mcp that carry requests are refused (503, nothing dispatched) from now on.
  void RefuseNewCalls() { refusing_.store(true); }
  bool refusing() const { return refusing_.load(); }

  // A request other than a health check (/healthz, /readyz) arrived.
  void NoteRequest() { last_request_ns_.store(Now()); }
  // A GET /readyz arrived: something (a load balancer) watches this replica's readiness.
  void NoteReadyProbe() { ready_probed_.store(true); }
  bool ready_probed() const { return ready_probed_.load(); }
  Clock::time_point last_request() const {
    return Clock::time_point(Clock::duration(last_request_ns_.load()));
  }

  // Marks a POST to /mcp as being answered for as long as the returned token lives (a streamed
  // answer keeps it until its stream ends).
  std::shared_ptr<void> Busy();
  size_t busy() const { return busy_.load(); }
  // An eventfd made readable each time busy() drops to 0 (the drain polls it; it reads it empty).
  int idle_fd() const { return idle_.get(); }

 private:
  static Clock::rep Now() { return Clock::now().time_since_epoch().count(); }

  std::atomic<bool> draining_{false};
  std::atomic<bool> refusing_{false};
  std::atomic<bool> ready_probed_{false};
  std::atomic<Clock::rep> last_request_ns_;
  std::atomic<size_t> busy_{0};
  const UniqueFd idle_;  // eventfd: written when busy_ drops to 0
};

}  // namespace imgmcp::http
