#include "gemini_client/proxy_probe.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "common/base64.h"
#include "common/decimal.h"
#include "common/unique_fd.h"

namespace imgmcp::gemini {
namespace {

using Clock = std::chrono::steady_clock;

// Milliseconds left until `deadline`, at least 0.
int MillisLeft(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

// A connected TCP socket to the proxy; not valid() when none could be made.
UniqueFd ConnectTo(const ProxyServer& proxy, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(proxy.host.c_str(), std::to_string(proxy.port).c_str(), &hints, &found) != 0) {
    return UniqueFd();
  }
  UniqueFd fd;
  for (addrinfo* a = found; a != nullptr && !fd.valid(); a = a->ai_next) {
    fd.Reset(socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) continue;
    if (connect(fd.get(), a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      fd.Reset();
      continue;
    }
    pollfd p{fd.get(), POLLOUT, 0};
    int error = 0;
    socklen_t length = sizeof(error);
    if (poll(&p, 1, MillisLeft(deadline)) != 1 ||
        getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
      fd.Reset();
    }
  }
  freeaddrinfo(found);
  return fd;
}

bool SendAll(int fd, std::string_view bytes, Clock::time_point deadline) {
  while (!bytes.empty()) {
    pollfd p{fd, POLLOUT, 0};
    if (poll(&p, 1, MillisLeft(deadline)) != 1) return false;
    const ssize_t sent = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno != EAGAIN && errno != EINTR) return false;
    if (sent > 0) bytes.remove_prefix(static_cast<size_t>(sent));
  }
  return true;
}

// The status code of "HTTP/1.x NNN …" once the first line has arrived, else 0.
int ReadStatus(int fd, Clock::time_point deadline) {
  std::string head;
  char buffer[512];
  while (head.find("\r\n") == std::string::npos && head.size() < 1024) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, MillisLeft(deadline)) != 1) return 0;
    const ssize_t got = recv(fd, buffer, sizeof(buffer), 0);
    if (got == 0) break;
    if (got < 0 && errno != EAGAIN && errno != EINTR) return 0;
    if (got > 0) head.append(buffer, static_cast<size_t>(got));
  }
  if (head.rfind("HTTP/1.", 0) != 0 || head.size() < 12 || head[8] != ' ') return 0;
  return ParseDecimal<int>(std::string_view(head).substr(9, 3), 0, 999).value_or(0);
}

}  // namespace

std::string EndpointHostPort(const Endpoint& endpoint) {
  std::string_view rest = endpoint.scheme_host_port;
  const size_t scheme_end = rest.find("://");
  if (scheme_end != std::string_view::npos) rest.remove_prefix(scheme_end + 3);
  const bool has_port =
      rest.find(':', rest.rfind(']') == std::string_view::npos ? 0 : rest.rfind(']')) !=
      std::string_view::npos;
  return std::string(rest) + (has_port ? "" : (endpoint.https ? ":443" : ":80"));
}

int ProbeProxyStatus(const ProxyServer& proxy, std::string_view target_host_port,
                     std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  const UniqueFd fd = ConnectTo(proxy, deadline);
  if (!fd.valid()) return 0;
  std::string request = "CONNECT " + std::string(target_host_port) +
                        " HTTP/1.1\r\nHost: " + std::string(target_host_port) + "\r\n";
  if (!proxy.username.empty()) {
    request += "Proxy-Authorization: Basic " + Base64Encode(proxy.username + ":" + proxy.password) +
               "\r\n";
  }
  request += "\r\n";
  return SendAll(fd.get(), request, deadline) ? ReadStatus(fd.get(), deadline) : 0;
}

}  // namespace imgmcp::gemini
