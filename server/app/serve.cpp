#include "server/app/serve.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include "common/allocator.h"
#include "common/log.h"
#include "mcp/stdio_transport.h"
#include "server/app/drain.h"
#include "server/app/readiness_probe.h"
#include "server/app/stop_signals.h"
#include "server/app/wiring.h"
#include "server/http/http_listener.h"
#include "server/http/listen_address.h"
#include "server/netmod/net_module_loader.h"
#include "server/ui/ui_resources.h"

namespace imgmcp::app {
namespace {

// What a task still running when a drain ends is failed with. Such a task is not taken over by
// another replica: it may have reached the backend already, and running it again could charge
// for it twice; its client retries.
constexpr char kTasksStoppedByShutdown[] =
    "the server was stopped (SIGTERM or SIGINT) before this task finished and its drain timeout "
    "passed; nothing was committed and no other server takes it over: retry the call";

// Loads the network module and starts listening; the port it listens on is logged.
Result<std::unique_ptr<http::HttpListener>> StartListener(const Config& config, WiredServer& wired,
                                                          const ReadinessProbe& probe) {
  mcp::McpServer& server = wired.server();
  http::HttpOptions options = MakeHttpOptions(config);
  options.metrics = wired.metrics();
  options.audit = wired.audit_trail();
  options.gallery_links = &wired.gallery_links();
  options.gallery_page = ui::SessionViewerHtml();
  options.readiness = [&probe] { return probe.Problem(); };
  ASSIGN_OR_RETURN(const netmod::NetModuleApi* net_module, netmod::LoadNetModule());
  std::unique_ptr<http::HttpListener> listener = net_module->new_http_listener(server, options);
  ASSIGN_OR_RETURN(const int port, listener->Start());
  log::Info("main", "listening on " + http::EndpointUrl(options.host, port));
  const std::string mcp_url =
      config.oauth_resource.empty() ? http::EndpointUrl(options.host, port) : config.oauth_resource;
  if (std::optional<std::string> page = http::GalleryPageUrl(mcp_url)) {
    wired.gallery_links().ServeAt(*page);
  } else {
    log::Warn("main", "get_image returns no gallery_url: --oauth-resource " + mcp_url +
                          " does not end in /mcp, so where /gallery is cannot be told");
  }
  return listener;
}

// The stdio drain: on SIGTERM or SIGINT the reader stops reading (as at EOF: `drain` is
// requested) and the calls in flight may finish within `grace`; a second signal exits at once
// (the state on disk is crash-safe and a turn dies with the process). Returns when `stop` is
// requested (StdioTransport::Run has returned).
void StopStdioOnSignal(std::stop_source& drain, std::chrono::milliseconds grace,
                       std::stop_token stop) {
  StopSignalWatch signals;
  const std::optional<int> first = signals.Next(stop);
  if (!first) return;
  log::Info("drain", std::string(*first == SIGINT ? "SIGINT" : "SIGTERM") +
                         ": no more input is read; calls in flight may finish within " +
                         std::to_string(grace.count() / 1000) + " s");
  drain.request_stop();
  if (!signals.Next(stop)) return;
  log::Info("drain", "signalled again: exiting now");
  std::_Exit(0);
}

}  // namespace

void PrepareProcess(const Config& config) {
  BoundRetainedMemory();  // first, before any thread exists: it bounds their malloc arenas
  log::Level level = log::Level::kInfo;
  log::ParseLevel(config.log_level, &level);  // ParseConfig accepted it
  log::SetMinLevel(level);
  log::Format format = log::Format::kText;
  log::ParseFormat(config.log_format, &format);  // ParseConfig accepted it
  log::SetFormat(format);
  for (const std::string& warning : ConfigWarnings(config)) log::Warn("main", warning);
  std::signal(SIGPIPE, SIG_IGN);
  if (!config.self_check) {
    const sigset_t stop_signals = StopSignals();
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  }
}

Status ServeHttpUntilStopped(const Config& config, WiredServer& wired) {
  wired.StartBackgroundWork();
  const ReadinessProbe probe(wired.store(), config.data_dir);
  auto started = StartListener(config, wired, probe);
  if (!started.ok()) return WithContext(started.error(), "--http");
  const std::unique_ptr<http::HttpListener> listener = std::move(*started);
  mcp::TaskRunner& tasks = wired.server().tasks();
  // Stopped when the listener ends by itself (it failed): then nothing is drained.
  std::jthread stopper([&listener, &config, &tasks](std::stop_token stop) {
    StopSignalWatch signals;
    if (const std::optional<int> signal_number = signals.Next(stop)) {
      Drain(*listener, tasks, std::chrono::seconds(config.drain_timeout_seconds), *signal_number,
            StopSignals());
    }
    tasks.Shutdown(kTasksStoppedByShutdown);
    listener->Stop();
  });
  listener->Wait();  // the listener failed, or the stopper is stopping it
  stopper.request_stop();
  stopper.join();  // the stopper's Stop() has returned: every session ended, threads joined
  listener->Stop();
  log::Info("main", "stopped");
  return Status::Ok();
}

bool ServeStdio(const Config& config, WiredServer& wired) {
  std::stop_source drain;
  mcp::StdioOptions options;
  options.drain = drain.get_token();
  options.stop_grace = std::chrono::seconds(config.drain_timeout_seconds);
  // Started once the first message is answered (or soon without one), with the store's open:
  // a stop signal that comes before waits, blocked, and is read then.
  std::jthread stopper;
  options.on_settled = [&] {
    wired.StartBackgroundWork();
    stopper = std::jthread([&drain, grace = options.stop_grace](std::stop_token stop) {
      StopStdioOnSignal(drain, grace, std::move(stop));
    });
  };
  mcp::StdioTransport transport(wired.server(), options);
  return transport.Run();  // then `stopper` is stopped and joined
}

}  // namespace imgmcp::app
