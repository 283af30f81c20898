#include "server/app/serve.h"

#include <pthread.h>

#include <csignal>
#include <memory>
#include <string>
#include <thread>

#include "common/log.h"
#include "server/app/wiring.h"
#include "server/http/http_listener.h"
#include "server/http/listen_address.h"
#include "server/mcp/stdio_transport.h"
#include "server/netmod/net_module_loader.h"
#include "server/ui/ui_resources.h"

namespace imgmcp::app {
namespace {

sigset_t StopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  return signals;
}

Error HttpError(const Error& error) { return Error(error.code, "--http: " + error.message); }

}  // namespace

void PrepareProcess(const Config& config) {
  log::Level level = log::Level::kInfo;
  log::ParseLevel(config.log_level, &level);  // ParseConfig accepted it
  log::SetMinLevel(level);
  for (const std::string& warning : ConfigWarnings(config)) log::Warn("main", warning);
  std::signal(SIGPIPE, SIG_IGN);
  if (config.http_listen) {
    const sigset_t stop_signals = StopSignals();
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  }
}

Status ServeHttpUntilStopped(const Config& config, mcp::McpServer& server) {
  http::HttpOptions options = MakeHttpOptions(config);
  options.gallery_page = ui::SessionViewerHtml();
  auto net_module = netmod::LoadNetModule();
  if (!net_module.ok()) return HttpError(net_module.error());
  const std::unique_ptr<http::HttpListener> listener =
      (*net_module)->new_http_listener(server, options);
  auto port = listener->Start();
  if (!port.ok()) return HttpError(port.error());
  log::Info("main", "listening on " + http::EndpointUrl(options.host, port.value()));
  std::thread stopper([&listener] {
    const sigset_t stop_signals = StopSignals();
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    listener->Stop();
  });
  listener->Wait();
  listener->Stop();
  pthread_kill(stopper.native_handle(), SIGTERM);  // wakes sigwait if the listener failed
  stopper.join();
  return Status::Ok();
}

bool ServeStdio(mcp::McpServer& server) {
  mcp::StdioTransport transport(server, mcp::StdioOptions{});
  return transport.Run();
}

}  // namespace imgmcp::app
