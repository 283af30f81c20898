// imgmcp entry point: flags and environment → wiring → run. No business rules here.
#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/log.h"
#include "server/app/config.h"
#include "server/app/wiring.h"
#include "server/http/http_listener.h"
#include "server/http/listen_address.h"
#include "server/mcp/self_check.h"
#include "server/mcp/server.h"
#include "server/mcp/stdio_transport.h"
#include "server/netmod/net_module_loader.h"
#include "server/tools/conformance_fixtures.h"
#include "server/tools/image_tools.h"
#include "server/tools/session_resources.h"
#include "server/ui/ui_resources.h"
#include "session/deferred_session_store.h"

namespace {

std::optional<std::string> GetEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

int Fail(const std::string& message) {
  imgmcp::log::Error("main", message);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace imgmcp;
  auto config = app::ParseConfig(std::vector<std::string>(argv + 1, argv + argc), GetEnv);
  if (!config.ok()) {
    log::Error("main", config.error().message);
    return 2;
  }
  if (config->show_help) {
    std::fputs(app::HelpText().c_str(), stdout);  // stdout-ok: CLI mode, not serving MCP
    return 0;
  }
  if (config->show_version) {
    std::puts(app::VersionText().c_str());  // stdout-ok: CLI mode, not serving MCP
    return 0;
  }
  log::Level level;
  log::ParseLevel(config->log_level, &level);
  log::SetMinLevel(level);
  for (const std::string& warning : app::ConfigWarnings(*config)) log::Warn("main", warning);
  // A client that goes away must not kill us mid-write; the writer sees EPIPE instead.
  std::signal(SIGPIPE, SIG_IGN);
  // Over HTTP, SIGINT/SIGTERM mean "stop serving": block them before any thread exists so only
  // the stopper thread below receives them (a worker thread would otherwise die of them).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  if (config->http_listen) pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto backend = app::MakeBackend(*config);
  if (!backend.ok()) return Fail("backend: " + backend.error().message);
  if (!backend->note.empty()) log::Info("main", backend->note);
  log::Info("main", "backend " + backend->backend->Name() + ", model " + backend->backend->Model() +
                        ", " + app::DescribeStore(*config));

  SystemClock clock;
  // The data dir is checked now (cannot create, write or lock it → exit before answering
  // anything); the store's open, migration and sweep run in the background, so initialize is
  // answered at once and tool calls wait for the open.
  auto store = app::OpenStore(*config, clock);
  if (!store.ok()) return Fail(app::DescribeStore(*config) + ": " + store.error().message);

  mcp::ServerOptions options;
  options.name = "imgmcp";
  options.title = "imgmcp image generation and editing";
  options.version = IMGMCP_VERSION;
  options.instructions =
      "Image sessions are chains of numbered versions. generate_image starts or extends a "
      "session; edit_image applies an instruction to the current version (edits of one session "
      "run in the order sent); get_image reads a version and the history; reset_session clears "
      "or reverts. Results carry a small preview, the file path and a resource link.";
  mcp::McpServer server(options);

  tools::ImageInputResolver input_resolver(app::MakeImageInputOptions(*config));
  tools::ImageTools image_tools(**store, *backend->backend, input_resolver,
                                &server.resource_notifier(),
                                app::MakeImageToolsOptions(*config, backend->note));
  for (auto& tool : image_tools.Tools()) {
    tool.definition.meta = ui::ToolUiMeta();  // MCP Apps hosts show results in the viewer
    if (auto s = server.RegisterTool(std::move(tool)); !s.ok()) {
      return Fail("tool registration: " + s.error().message);
    }
  }
  server.AddResourceProvider(std::make_shared<tools::SessionResources>(**store));
  // After the sessions, so resources/list still starts with the newest session.
  server.AddResourceProvider(std::make_shared<ui::UiResources>());
  if (config->conformance_fixtures) {
    if (auto s = tools::RegisterConformanceFixtures(server); !s.ok()) {
      return Fail("conformance fixtures: " + s.error().message);
    }
  }

  if (config->self_check) {
    auto summary = mcp::RunSelfCheck(server);
    if (!summary.ok()) return Fail("self-check FAILED: " + summary.error().message);
    log::Info("main", "self-check ok: " + summary.value());
    return 0;
  }

  if (config->http_listen) {
    http::HttpOptions http_options = app::MakeHttpOptions(*config);
    http_options.gallery_page = ui::SessionViewerHtml();
    auto net_module = netmod::LoadNetModule();
    if (!net_module.ok()) return Fail("--http: " + net_module.error().message);
    const std::unique_ptr<http::HttpListener> http_transport =
        (*net_module)->new_http_listener(server, http_options);
    auto port = http_transport->Start();
    if (!port.ok()) return Fail("--http: " + port.error().message);
    log::Info("main", "listening on " + http::EndpointUrl(http_options.host, port.value()));
    std::thread stopper([&] {
      int signal_number = 0;
      sigwait(&stop_signals, &signal_number);
      http_transport->Stop();
    });
    http_transport->Wait();
    http_transport->Stop();
    pthread_kill(stopper.native_handle(), SIGTERM);  // wakes sigwait if the listener failed
    stopper.join();
    return 0;
  }

  mcp::StdioTransport transport(server, mcp::StdioOptions{});
  if (!transport.Run()) {
    // Some call ignored cancellation; do not wait for it (state on disk is crash-safe).
    std::_Exit(0);
  }
  return 0;
}
