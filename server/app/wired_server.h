// The MCP server imgmcp runs: an McpServer with the four image tools, the session and viewer
// resources (and the conformance fixtures when asked), plus what they run on — the backend and the
// session store. Built from a Config in dependency order, destroyed in reverse.
#pragma once

#include <memory>

#include "common/clock.h"
#include "common/result.h"
#include "common/thread_annotations.h"
#include "common/timer_thread.h"
#include "mcp/server.h"
#include "metrics/metrics.h"
#include "server/app/batch_delivery.h"
#include "server/app/config.h"
#include "server/app/mcp_metrics.h"
#include "server/app/task_sweeper.h"
#include "server/app/wiring.h"
#include "server/http/http_listener.h"
#include "server/tools/image_input.h"
#include "server/tools/image_tools.h"
#include "server/tools/person_limits.h"
#include "server/tools/store_audit_trail.h"
#include "server/tools/store_gallery_links.h"
#include "server/tools/store_task_ledger.h"
#include "server/tools/store_task_watch.h"
#include "session/deferred_session_store.h"

namespace imgmcp::app {

class WiredServer {
 public:
  // Chooses the backend, checks the data dir and makes the store (its open begins with
  // StartBackgroundWork, or with the first call that needs it), then registers tools and
  // resources. Errors say which step failed ("backend: …", "data dir …: …").
  static Result<std::unique_ptr<WiredServer>> Build(const Config& config);

  WiredServer(const WiredServer&) = delete;
  WiredServer& operator=(const WiredServer&) = delete;
  ~WiredServer();  // stops the batch poller first: it works on the store

  mcp::McpServer& server() { return *server_; }
  const BackendSelection& backend() const { return backend_; }
  session::DeferredSessionStore& store() { return *store_; }
  // nullptr unless MetricsWanted(config).
  metrics::Metrics* metrics() { return metrics_.get(); }
  // The audit trail (--audit-days > 0), nullptr without one.
  mcp::AuditTrail* audit_trail() { return audit_trail_.get(); }
  // get_image's gallery links (mcp/gallery_links.h); they link to a page once the HTTP listener
  // names it (StoreGalleryLinks::ServeAt).
  tools::StoreGalleryLinks& gallery_links() { return *gallery_links_; }
  // Begins the store's background open and the removal of expired task rows (TaskSweeper);
  // once, when serving has begun: a stdio server calls it after answering its first message,
  // whose answer that work would otherwise slow down.
  void StartBackgroundWork();

 private:
  WiredServer() = default;
  Status RegisterTools(const Config& config);
  // The store's open succeeded (on the opening thread): the batch poller starts on it.
  void StoreOpened(session::SessionStore& opened);

  TimerThread timers_;  // every call's timers (heartbeats, deadlines); outlives their users
  std::unique_ptr<metrics::Metrics> metrics_;  // outlives everything that records into it
  std::unique_ptr<McpMetrics> mcp_metrics_;    // the protocol core's view of metrics_
  SystemClock clock_;                          // the store's; outlives it
  BackendSelection backend_;
  std::unique_ptr<session::DeferredSessionStore> store_;
  std::unique_ptr<tools::StoreTaskLedger> task_ledger_;  // tasks as the store's rows
  std::unique_ptr<tools::StoreTaskWatch> task_watch_;    // PostgreSQL: other replicas' changes
  std::unique_ptr<tools::PersonLimits> person_limits_;   // --rate-limit/--max-calls-per-user
  std::unique_ptr<tools::StoreAuditTrail> audit_trail_;  // --audit-days > 0
  std::unique_ptr<tools::StoreGalleryLinks> gallery_links_;
  int audit_days_ = 0;
  std::chrono::milliseconds task_ttl_{0};
  std::unique_ptr<TaskSweeper> task_sweeper_;  // expired task rows, from StartBackgroundWork
  std::unique_ptr<mcp::McpServer> server_;
  std::unique_ptr<tools::ImageInputResolver> input_resolver_;
  std::unique_ptr<tools::ImageTools> image_tools_;  // uses everything above
  Mutex batch_mu_;  // guards batch_ against the opening thread (StoreOpened)
  std::unique_ptr<BatchDelivery> batch_ GUARDED_BY(batch_mu_);  // the Gemini API backend only
  std::unique_ptr<http::HttpListener> metrics_listener_;        // --metrics; stopped first
};

}  // namespace imgmcp::app
