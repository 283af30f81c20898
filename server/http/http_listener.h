// HttpListener: what the binary needs of the Streamable HTTP transport — start, wait, drain,
// stop — without its implementation (http_transport.cpp, in the network module; server/netmod).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "mcp/audit_trail.h"
#include "mcp/gallery_links.h"
#include "server/oauth/oauth_options.h"

namespace imgmcp::metrics {
class Metrics;
}  // namespace imgmcp::metrics

namespace imgmcp::http {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 0;            // 0 = OS-chosen
  std::string auth_token;  // empty = no auth; else "Authorization: Bearer <token>" is required
  // OAuth 2.1 (server/oauth, oauth_gate.h): /mcp takes the access tokens of these issuers, each
  // request's principal owns its sessions and tasks, and the protected-resource metadata is
  // served. Never set together with `auth_token`.
  std::optional<oauth::OAuthOptions> oauth;
  // Where refused OAuth tokens are recorded (mcp/audit_trail.h): a request that sent a token and
  // got 401; nullptr: nowhere. Must outlive the transport.
  mcp::AuditTrail* audit = nullptr;
  // With OAuth: opens the tokens of gallery links (mcp/gallery_links.h), which /mcp then takes as
  // a read-only credential for their one session; nullptr: no link opens. Must outlive the server.
  mcp::GalleryLinks* gallery_links = nullptr;
  size_t max_body_bytes = size_t{96} << 20;  // larger POST bodies get 413
  std::chrono::seconds session_idle_timeout{1800};
  // Host names accepted in Host/Origin besides localhost, 127.0.0.1 and [::1] (any port). The
  // bind host is added automatically unless it is a wildcard (0.0.0.0, ::).
  std::vector<std::string> extra_allowed_hosts;
  // Worker threads: requests being answered at once (a streaming answer holds one while it
  // streams). Connections waiting for a request head or idle between requests hold none.
  size_t max_connections = 128;
  // A request head must arrive whole within this, from its first byte (from the connection's
  // start for the first request); else 408 and the connection is closed.
  std::chrono::milliseconds header_timeout{10'000};
  // Connections waiting for a request head beyond this: the one waiting longest is closed.
  size_t max_pending_connections = 512;
  size_t max_sessions = 4096;                  // initialize beyond it gets 503
  std::chrono::milliseconds sse_retry{1000};   // `retry:` of priming events
  std::chrono::seconds sse_keepalive{15};      // comment frame on idle streams
  size_t replay_max_events = 1024;             // per session
  size_t replay_max_bytes = size_t{16} << 20;  // per session
  const Clock* clock = nullptr;                // session expiry clock; nullptr = system
  // HTML served at GET /gallery (gallery_route.h); empty = no /gallery. Must outlive the server.
  std::string_view gallery_page;
  // Serve only GET /metrics and /healthz (the --metrics listener); /metrics is served when
  // `metrics` is set.
  bool metrics_only = false;
  // The server's metrics: /metrics renders them, and the transport records its own (sessions,
  // streams, gate refusals) into them; nullptr: off. Must outlive the transport.
  metrics::Metrics* metrics = nullptr;
  // GET /readyz: why this replica is not ready to take requests (e.g. its store does not answer),
  // nullopt when it is. Called on a worker thread for every probe, so it must answer at once
  // (server/app/readiness_probe.h keeps a verdict a background thread refreshes). Unset: ready
  // (until the drain starts).
  std::function<std::optional<std::string>()> readiness;
};

// What a drain watches (server/app/drain.h).
struct DrainActivity {
  std::chrono::steady_clock::time_point last_request;  // the last one besides health checks
  size_t busy = 0;  // POSTs to /mcp being answered (streamed answers until their stream ends)
  bool ready_probed = false;  // GET /readyz was ever asked: a load balancer watches readiness
  int idle_fd = -1;  // readable (an eventfd) each time `busy` drops to 0; the drain polls it
};

class HttpListener {
 public:
  virtual ~HttpListener() = default;

  // Binds and starts serving on background threads. Returns the bound port.
  virtual Result<int> Start() = 0;
  // Ends every session (cancelling its calls), closes streams (each gets an SSE `retry:` hint
  // first, so its client reconnects, to another replica behind a proxy) and the listener, joins the
  // threads. Idempotent.
  virtual void Stop() = 0;
  // Blocks until Stop() is called or the listener fails.
  virtual void Wait() = 0;

  // --- drain (SIGTERM/SIGINT), in this order, then Stop() ------------------------------------
  // /readyz answers 503 from now on; everything else is served as before.
  virtual void BeginDrain() = 0;
  // POSTs to /mcp that carry requests get 503 from now on (nothing dispatched, so a proxy may
  // retry them elsewhere); answers in progress go on.
  virtual void RefuseNewCalls() = 0;
  virtual DrainActivity Activity() const = 0;
};

}  // namespace imgmcp::http
