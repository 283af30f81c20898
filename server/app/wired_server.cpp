#include "server/app/wired_server.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "common/log.h"
#include "common/sha256.h"
#include "server/conformance/conformance_fixtures.h"
#include "server/netmod/net_module_loader.h"
#include "server/tools/session_resources.h"
#include "server/ui/ui_resources.h"
#include "session/postgres/postgres_session_store.h"

namespace imgmcp::app {
namespace {

// The MAC key of MRTR requestState (mcp/request_state.h). A client may send a multi-round
// retry to another replica behind the same load balancer, so replicas must share the key:
// IMGMCP_REQUEST_STATE_KEY when set; else one derived from the bearer token, which replicas share
// anyway (a one-way derivation: the key never reveals the token); else none, and the server makes
// a random key of its own (a retry must then come back to the same process).
std::string RequestStateKey(const Config& config) {
  const char* key = std::getenv("IMGMCP_REQUEST_STATE_KEY");
  if (key != nullptr && *key != '\0') return key;
  if (!config.auth_token.empty()) {
    return HmacSha256Hex(config.auth_token, "imgmcp requestState key v1");
  }
  return {};
}

mcp::ServerOptions MakeServerOptions(const Config& config) {
  mcp::ServerOptions options;
  options.request_state_key = RequestStateKey(config);
  options.name = "imgmcp";
  options.title = "imgmcp image generation and editing";
  options.version = IMGMCP_VERSION;
  options.instructions =
      "Image sessions are chains of numbered versions. generate_image starts or extends a "
      "session; edit_image applies an instruction to the current version (edits of one session "
      "run in the order sent); get_image reads a version and the history; reset_session clears "
      "or reverts. Results carry a small preview, the file path and a resource link.";
  return options;
}

}  // namespace

Result<std::unique_ptr<WiredServer>> WiredServer::Build(const Config& config) {
  std::unique_ptr<WiredServer> wired(new WiredServer());
  if (MetricsWanted(config)) {  // over HTTP only, which loads the network module anyway
    auto metrics = netmod::NewMetricsViaNetModule();
    if (!metrics.ok()) {
      return WithContext(metrics.error(), config.http_listen ? "--http" : "--metrics");
    }
    wired->metrics_ = std::move(*metrics);
  }
  auto backend = MakeBackend(config, wired->metrics_.get(), &wired->timers_);
  if (!backend.ok()) return WithContext(backend.error(), "backend");
  wired->backend_ = std::move(*backend);
  const imaging::ImageBackend& chosen = *wired->backend_.backend;
  if (!wired->backend_.note.empty()) log::Info("main", wired->backend_.note);
  log::Info("main", "backend " + chosen.Name() + ", model " + chosen.Model() + ", " +
                        DescribeStore(config));

  // The data dir is checked now (cannot create, write or lock it → exit before answering
  // anything); the store's open, migration and sweep run in the background, so initialize is
  // answered at once and tool calls wait for the open.
  WiredServer* server = wired.get();
  auto store = OpenStore(config, wired->clock_, wired->metrics_.get(),
                         [server](session::SessionStore& opened) { server->StoreOpened(opened); });
  if (!store.ok()) return WithContext(store.error(), DescribeStore(config));
  wired->store_ = std::move(*store);

  mcp::ServerOptions server_options = MakeServerOptions(config);
  const tools::ImageToolsOptions tool_options = MakeImageToolsOptions(config, "");
  wired->task_ledger_ = std::make_unique<tools::StoreTaskLedger>(
      *wired->store_, tool_options.preview, tool_options.limits);
  server_options.tasks.ledger = wired->task_ledger_.get();
  if (session::postgres::IsPostgresUrl(config.store)) {  // SQLite has no other writer to hear of
    wired->task_watch_ =
        std::make_unique<tools::StoreTaskWatch>(*wired->store_, *wired->task_ledger_);
    server_options.task_watch = wired->task_watch_.get();
  }
  server_options.tasks.ttl_ms = int64_t{config.task_ttl_seconds} * 1000;
  wired->task_ttl_ = std::chrono::milliseconds(server_options.tasks.ttl_ms);
  server_options.tasks.max_per_owner = static_cast<size_t>(config.max_tasks_per_owner);
  server_options.tasks.max_running = server_options.max_concurrent_calls;
  wired->audit_days_ = config.audit_days;
  if (config.audit_days > 0) {
    wired->audit_trail_ = std::make_unique<tools::StoreAuditTrail>(*wired->store_, wired->clock_);
    server_options.audit = wired->audit_trail_.get();
  }
  wired->gallery_links_ = std::make_unique<tools::StoreGalleryLinks>(
      *wired->store_, std::chrono::seconds(config.gallery_link_ttl_seconds), wired->clock_);
  if (config.rate_limit_per_user > 0 || config.max_calls_per_user > 0) {
    wired->person_limits_ = std::make_unique<tools::PersonLimits>(
        *wired->store_, wired->clock_,
        tools::PersonLimitsOptions{.max_in_flight = config.max_calls_per_user,
                                   .calls_per_minute = config.rate_limit_per_user});
    server_options.call_limiter = wired->person_limits_.get();
  }
  if (wired->metrics_) wired->mcp_metrics_ = std::make_unique<McpMetrics>(*wired->metrics_);
  server_options.metrics = wired->mcp_metrics_.get();
  server_options.tasks.metrics = wired->mcp_metrics_.get();
  wired->server_ = std::make_unique<mcp::McpServer>(std::move(server_options));
  RETURN_IF_ERROR(wired->RegisterTools(config));
  wired->server_->AddResourceProvider(std::make_shared<tools::SessionResources>(*wired->store_));
  // After the sessions, so resources/list still starts with the newest session.
  wired->server_->AddResourceProvider(std::make_shared<ui::UiResources>());
  if (config.conformance_fixtures) {
    if (Status s = conformance::RegisterConformanceFixtures(*wired->server_); !s.ok()) {
      return WithContext(s.error(), "conformance fixtures");
    }
  }
  if (config.metrics_listen && !config.self_check) {
    ASSIGN_OR_RETURN(wired->metrics_listener_,
                     StartMetricsListener(config, *wired->server_, wired->metrics_.get()));
  }
  return wired;
}

Status WiredServer::RegisterTools(const Config& config) {
  input_resolver_ = std::make_unique<tools::ImageInputResolver>(MakeImageInputOptions(config));
  tools::ImageToolsOptions options = MakeImageToolsOptions(config, backend_.note);
  options.timers = &timers_;
  options.metrics = metrics_.get();
  options.audit = audit_trail_.get();
  options.gallery_links = gallery_links_.get();
  options.batch_refusal = backend_.batch_refusal;
  options.batch_window = std::chrono::milliseconds(config.batch_window_ms);
  image_tools_ =
      std::make_unique<tools::ImageTools>(*store_, *backend_.backend, *input_resolver_,
                                          &server_->resource_notifier(), std::move(options));
  if (backend_.batch) {
    task_ledger_->EnableBatch(backend_.backend->Model(),
                              std::chrono::milliseconds(config.batch_window_ms));
    BatchPollerOptions batch;
    batch.window = std::chrono::milliseconds(config.batch_window_ms);
    batch.max_per_job = config.batch_max;
    batch.first_poll = std::chrono::milliseconds(config.batch_poll_ms);
    MutexLock lock(batch_mu_);
    batch_ = std::make_unique<BatchDelivery>(BatchDeliveryParts{
        .store = *store_,
        .ledger = *task_ledger_,
        .tools = *image_tools_,
        .backend = *backend_.backend,
        .client = std::move(backend_.batch),
        .clock = clock_,
        .options = batch,
        // A round acts on what is due; a quarter of the shortest wait keeps it on time.
        .tick = std::clamp(std::min(batch.window, batch.first_poll) / 4,
                           std::chrono::milliseconds(50), std::chrono::milliseconds(500))});
  }
  for (auto& tool : image_tools_->Tools()) {
    tool.definition.meta = ui::ToolUiMeta();  // MCP Apps hosts show results in the viewer
    if (Status s = server_->RegisterTool(std::move(tool)); !s.ok()) {
      return WithContext(s.error(), "tool registration");
    }
  }
  return Status::Ok();
}

WiredServer::~WiredServer() {
  MutexLock lock(batch_mu_);
  batch_.reset();
}

void WiredServer::StoreOpened(session::SessionStore& opened) {
  MutexLock lock(batch_mu_);
  if (batch_) batch_->Start(opened);
}

void WiredServer::StartBackgroundWork() {
  store_->StartOpening();
  if (!task_sweeper_) {
    task_sweeper_ = std::make_unique<TaskSweeper>(*store_, task_ttl_, audit_days_);
  }
}

}  // namespace imgmcp::app
