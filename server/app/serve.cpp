#include "server/app/serve.h"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "common/log.h"
#include "server/app/drain.h"
#include "server/app/readiness_probe.h"
#include "server/app/wiring.h"
#include "server/http/http_listener.h"
#include "server/http/listen_address.h"
#include "server/mcp/stdio_transport.h"
#include "server/netmod/net_module_loader.h"
#include "server/ui/ui_resources.h"

namespace imgmcp::app {
namespace {

// Interrupts the stdio reader's blocking read() for a drain.
constexpr int kWakeReader = SIGUSR1;

sigset_t StopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  return signals;
}

// Loads the network module and starts listening; the port it listens on is logged.
Result<std::unique_ptr<http::HttpListener>> StartListener(const Config& config,
                                                          mcp::McpServer& server,
                                                          const ReadinessProbe& probe) {
  http::HttpOptions options = MakeHttpOptions(config);
  options.gallery_page = ui::SessionViewerHtml();
  options.readiness = [&probe] { return probe.Problem(); };
  ASSIGN_OR_RETURN(const netmod::NetModuleApi* net_module, netmod::LoadNetModule());
  std::unique_ptr<http::HttpListener> listener = net_module->new_http_listener(server, options);
  ASSIGN_OR_RETURN(const int port, listener->Start());
  log::Info("main", "listening on " + http::EndpointUrl(options.host, port));
  return listener;
}

// The stdio drain: on SIGTERM or SIGINT the reader stops reading (as at EOF; `reader` is
// interrupted with kWakeReader until StdioTransport::Run returns, `done`) and calls in flight get
// `grace` to finish. A second signal exits at once: the state on disk is crash-safe and a turn
// dies with the process.
void StopStdioOnSignal(pthread_t reader, std::chrono::milliseconds grace,
                       std::atomic<bool>& stop_reading, const std::atomic<bool>& done) {
  const sigset_t stop_signals = StopSignals();
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  if (done.load()) return;
  log::Info("drain", std::string(signal_number == SIGINT ? "SIGINT" : "SIGTERM") +
                         ": no more input is read; calls in flight may finish within " +
                         std::to_string(grace.count() / 1000) + " s");
  stop_reading.store(true);
  const timespec step{0, 50'000'000};
  while (!done.load()) {
    pthread_kill(reader, kWakeReader);
    if (sigtimedwait(&stop_signals, nullptr, &step) > 0 && !done.load()) {
      log::Info("drain", "signalled again: exiting now");
      std::_Exit(0);
    }
  }
}

}  // namespace

void PrepareProcess(const Config& config) {
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
  if (!config.http_listen) {
    // Interrupts the stdio reader's read() for a drain (ServeStdio): no SA_RESTART.
    struct sigaction wake = {};
    wake.sa_handler = [](int) {};
    sigemptyset(&wake.sa_mask);
    sigaction(kWakeReader, &wake, nullptr);
  }
}

Status ServeHttpUntilStopped(const Config& config, WiredServer& wired) {
  const ReadinessProbe probe(wired.store(), config.data_dir);
  auto started = StartListener(config, wired.server(), probe);
  if (!started.ok()) return Error(started.error().code, "--http: " + started.error().message);
  const std::unique_ptr<http::HttpListener> listener = std::move(*started);
  std::atomic<bool> listener_ended{false};
  std::thread stopper([&listener, &listener_ended, &config] {
    const sigset_t stop_signals = StopSignals();
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    if (!listener_ended.load()) {
      Drain(*listener, std::chrono::seconds(config.drain_timeout_seconds), signal_number,
            stop_signals);
    }
    listener->Stop();
  });
  listener->Wait();
  listener_ended.store(true);  // the listener failed, or the stopper is stopping it
  pthread_kill(stopper.native_handle(), SIGTERM);  // wakes sigwait if the listener failed
  stopper.join();  // the stopper's Stop() has returned: every session ended, threads joined
  listener->Stop();
  log::Info("main", "stopped");
  return Status::Ok();
}

bool ServeStdio(const Config& config, mcp::McpServer& server) {
  std::atomic<bool> stop_reading{false};
  std::atomic<bool> done{false};
  mcp::StdioOptions options;
  options.stop_reading = &stop_reading;
  options.stop_grace = std::chrono::seconds(config.drain_timeout_seconds);
  const pthread_t reader = pthread_self();
  std::thread stopper([&stop_reading, &done, &options, reader] {
    StopStdioOnSignal(reader, options.stop_grace, stop_reading, done);
  });
  mcp::StdioTransport transport(server, options);
  const bool idle = transport.Run();
  done.store(true);
  pthread_kill(stopper.native_handle(), SIGTERM);  // wakes its wait when no signal came
  stopper.join();
  return idle;
}

}  // namespace imgmcp::app
