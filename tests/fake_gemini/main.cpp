// fake_gemini: the FakeGeminiServer as a process, for integration and interop tests.
//   fake_gemini [--host 127.0.0.1] [--port 0] [--port-file PATH] [--latency-ms N]
//               [--fixed-image-file PATH] [--invalid-key KEY] [--tls-cert PEM --tls-key PEM]
//               [--ignore-stdin]
// Prints "fake_gemini listening on HOST:PORT" once ready; serves until SIGTERM/SIGINT or, when
// stdin is a pipe or terminal, until stdin reaches EOF (so a dying parent takes it down).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

#include "common/log.h"
#include "tests/fake_gemini/fake_gemini_server.h"

namespace {

struct Flags {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string port_file;
  imgmcp::fake_gemini::FakeGeminiOptions options;
  bool ignore_stdin = false;
};

int Usage(const std::string& problem) {
  std::cerr << "fake_gemini: " << problem
            << "\nusage: fake_gemini [--host H] [--port N] [--port-file PATH] [--latency-ms N] "
               "[--fixed-image-file PATH] [--invalid-key KEY] [--tls-cert PEM --tls-key PEM] "
               "[--ignore-stdin]\n";
  return 2;
}

bool WritePortFile(const std::string& path, int port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << port << "\n";
    if (!out.flush()) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

bool StdinIsWatchable() {
  struct stat st {};
  if (fstat(STDIN_FILENO, &st) != 0) return false;
  return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || isatty(STDIN_FILENO);
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    try {
      if (arg == "--host" && (v = value())) {
        flags.host = v;
      } else if (arg == "--port" && (v = value())) {
        flags.port = std::stoi(v);
      } else if (arg == "--port-file" && (v = value())) {
        flags.port_file = v;
      } else if (arg == "--latency-ms" && (v = value())) {
        flags.options.latency = std::chrono::milliseconds(std::stoll(v));
      } else if (arg == "--fixed-image-file" && (v = value())) {
        flags.options.fixed_image_file = v;
      } else if (arg == "--invalid-key" && (v = value())) {
        flags.options.invalid_key = v;
      } else if (arg == "--tls-cert" && (v = value())) {
        flags.options.tls_cert_file = v;
      } else if (arg == "--tls-key" && (v = value())) {
        flags.options.tls_key_file = v;
      } else if (arg == "--ignore-stdin") {
        flags.ignore_stdin = true;
      } else {
        return Usage("unknown or incomplete argument " + arg);
      }
    } catch (const std::exception&) {
      return Usage("bad number for " + arg);
    }
  }

  // Block the stop signals before any thread starts so only the waiter below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  imgmcp::fake_gemini::FakeGeminiServer server(flags.options);
  auto port = server.Start(flags.host, flags.port);
  if (!port.ok()) {
    imgmcp::log::Error("fake_gemini", port.error().message);
    return 1;
  }
  if (!flags.port_file.empty() && !WritePortFile(flags.port_file, *port)) {
    imgmcp::log::Error("fake_gemini", "cannot write the port file " + flags.port_file);
    return 1;
  }
  std::printf("fake_gemini listening on %s:%d\n", flags.host.c_str(), *port);  // stdout-ok
  std::fflush(stdout);                                                         // stdout-ok

  std::mutex mutex;  // guards stop
  std::condition_variable cv;
  bool stop = false;
  auto request_stop = [&] {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stop = true;
    }
    cv.notify_all();
  };
  std::thread([&stop_signals, request_stop] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    request_stop();
  }).detach();
  if (!flags.ignore_stdin && StdinIsWatchable()) {
    std::thread([request_stop] {
      char buf[4096];
      while (true) {
        const ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EINTR)) break;
      }
      request_stop();
    }).detach();
  }
  {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return stop; });
  }
  server.Stop();
  // The detached waiters may still be blocked in read/sigwait; leave without unwinding them.
  std::_Exit(0);
}
