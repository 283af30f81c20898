#include "server/http/connection_gate.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "common/ascii.h"
#include "common/decimal.h"
#include "common/log.h"
#include "common/posix_io.h"
#include "server/http/log_tag.h"

namespace imgmcp::http {

namespace {

constexpr int kMaxEvents = 256;
constexpr int kMaxAcceptsPerWake = 64;  // then serve what is already here before accepting more
constexpr size_t kReadChunk = 16 << 10;
// With no file descriptor left (EMFILE) and nobody to evict, accepting pauses this long.
constexpr auto kAcceptPause = std::chrono::milliseconds(50);
constexpr auto kEvictionWarningEvery = std::chrono::seconds(10);

using SteadyClock = std::chrono::steady_clock;

const char* ReasonPhrase(int status) {
  switch (status) {
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 431:
      return "Request Header Fields Too Large";
    default:
      return "Error";
  }
}

}  // namespace

HeadScan ScanRequestHead(std::string_view bytes, size_t max_head_bytes, size_t searched) {
  HeadScan scan;
  const size_t end = bytes.find("\r\n\r\n", searched > 3 ? searched - 3 : 0);
  if (end == std::string_view::npos) {
    if (bytes.size() >= max_head_bytes) scan.state = HeadScan::State::kTooLarge;
    return scan;
  }
  scan.head_bytes = end + 4;
  if (scan.head_bytes > max_head_bytes) {
    scan.state = HeadScan::State::kTooLarge;
    return scan;
  }
  scan.state = HeadScan::State::kComplete;
  // Header lines: after the request line, up to the blank line.
  std::string_view rest = bytes.substr(0, end + 2);
  const size_t first = rest.find("\r\n");
  rest.remove_prefix(first + 2);
  while (!rest.empty()) {
    const size_t eol = rest.find("\r\n");
    const std::string_view line = rest.substr(0, eol);
    rest.remove_prefix(eol + 2);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = TrimSpacesAndTabs(line.substr(colon + 1));
    if (EqualsIgnoreAsciiCase(name, "Content-Length")) {
      // Unparsable values are left to the HTTP parser; of several, the largest counts here.
      if (auto length = ParseDecimalSaturating<uint64_t>(value)) {
        scan.content_length = std::max(scan.content_length.value_or(0), *length);
      }
    } else if (EqualsIgnoreAsciiCase(name, "Transfer-Encoding")) {
      scan.chunked = EqualsIgnoreAsciiCase(value, "chunked");
    }
  }
  return scan;
}

Result<std::unique_ptr<ConnectionGate>> ConnectionGate::Create(int listen_fd, GateOptions options,
                                                               Handoff handoff) {
  const int flags = ::fcntl(listen_fd, F_GETFL, 0);
  if (flags < 0 || ::fcntl(listen_fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return MakeError(ErrorCode::kInternal, std::string("listening socket: ") + ErrnoText(errno));
  }
  UniqueFd epoll_fd(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_fd.valid()) {
    return MakeError(ErrorCode::kInternal, std::string("epoll_create1: ") + ErrnoText(errno));
  }
  UniqueFd wake_fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_fd.valid()) {
    return MakeError(ErrorCode::kInternal, std::string("eventfd: ") + ErrnoText(errno));
  }
  for (int fd : {listen_fd, wake_fd.get()}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
      return MakeError(ErrorCode::kInternal, std::string("epoll_ctl: ") + ErrnoText(errno));
    }
  }
  return std::unique_ptr<ConnectionGate>(new ConnectionGate(
      listen_fd, std::move(epoll_fd), std::move(wake_fd), std::move(options), std::move(handoff)));
}

ConnectionGate::ConnectionGate(int listen_fd, UniqueFd epoll_fd, UniqueFd wake_fd,
                               GateOptions options, Handoff handoff)
    : listen_fd_(listen_fd),
      epoll_fd_(std::move(epoll_fd)),
      wake_fd_(std::move(wake_fd)),
      options_(std::move(options)),
      handoff_(std::move(handoff)) {}

ConnectionGate::~ConnectionGate() {
  entries_.clear();  // each connection closes its socket
  {
    MutexLock lock(inbox_mu_);
    inbox_.clear();
    stopped_ = true;
  }
}

void ConnectionGate::Stop() {
  stop_requested_.store(true);
  Wake();
}

void ConnectionGate::Wake() {
  const uint64_t one = 1;
  // The counter only grows; a full counter (never in practice) still leaves the fd readable.
  [[maybe_unused]] ssize_t n = ::write(wake_fd_.get(), &one, sizeof one);
}

void ConnectionGate::PostInbound(Inbound inbound) {
  {
    MutexLock lock(inbox_mu_);
    // The gate is gone: nobody waits for the next request, and `inbound`'s connection is closed
    // as it goes out of scope.
    if (stopped_) return;
    inbox_.push_back(std::move(inbound));
  }
  Wake();
}

void ConnectionGate::Return(std::unique_ptr<GateConnection> connection) {
  PostInbound(Inbound{std::move(connection), false});
}

void ConnectionGate::Finish(std::unique_ptr<GateConnection> connection) {
  PostInbound(Inbound{std::move(connection), true});
}

GateStats ConnectionGate::Stats() const {
  GateStats s;
  s.accepted = accepted_.load();
  s.handed_off = handed_off_.load();
  s.timed_out = timed_out_.load();
  s.evicted = evicted_.load();
  s.refused = refused_.load();
  s.waiting = waiting_.load();
  return s;
}

void ConnectionGate::Run() {
  std::array<epoll_event, kMaxEvents> events{};
  while (!stop_requested_.load()) {
    const int n = ::epoll_wait(epoll_fd_.get(), events.data(), kMaxEvents, NextTimeoutMs());
    if (n < 0 && errno != EINTR) {
      log::Error(kLog, std::string("epoll_wait failed: ") + ErrnoText(errno));
      break;
    }
    for (int i = 0; i < n; ++i) {
      const int fd = events[static_cast<size_t>(i)].data.fd;
      if (fd == wake_fd_.get()) {
        uint64_t count = 0;
        [[maybe_unused]] ssize_t r = ::read(wake_fd_.get(), &count, sizeof count);
        TakeInbound();
      } else if (fd == listen_fd_) {
        AcceptAll();
      } else {
        OnReadable(fd);
      }
    }
    if (accept_paused_ && SteadyClock::now() >= accept_resume_) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.fd = listen_fd_;
      if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, listen_fd_, &ev) == 0) {
        accept_paused_ = false;
      }
    }
    ExpireDeadlines();
    waiting_.store(entries_.size());
  }
  {
    MutexLock lock(inbox_mu_);
    stopped_ = true;
  }
  TakeInbound();  // closes them: nothing is served any more
  entries_.clear();
  deadlines_.clear();
  admission_.clear();
  waiting_.store(0);
}

int ConnectionGate::NextTimeoutMs() const {
  std::optional<SteadyClock::time_point> next;
  if (!deadlines_.empty()) next = deadlines_.begin()->first;
  if (accept_paused_ && (!next || accept_resume_ < *next)) next = accept_resume_;
  if (!next) return -1;
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(*next - SteadyClock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, 60'000));
}

void ConnectionGate::AcceptAll() {
  for (int i = 0; i < kMaxAcceptsPerWake; ++i) {
    UniqueFd fd(::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd.valid()) {
      const int err = errno;
      if (err == EAGAIN || err == EWOULDBLOCK) return;
      if (err == EMFILE || err == ENFILE) {
        // Out of descriptors: make room by closing the longest waiter, else pause accepting.
        if (!admission_.empty()) {
          EvictOldest();
          continue;
        }
        if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, listen_fd_, nullptr) == 0) {
          accept_paused_ = true;
          accept_resume_ = SteadyClock::now() + kAcceptPause;
        }
        log::Warn(kLog, "out of file descriptors; accepting paused briefly");
        return;
      }
      if (err == EINTR || err == ECONNABORTED || err == EPROTO || err == ENETDOWN ||
          err == ENOPROTOOPT || err == EHOSTDOWN || err == ENONET || err == EHOSTUNREACH ||
          err == EOPNOTSUPP || err == ENETUNREACH) {
        continue;
      }
      log::Error(kLog, std::string("accept failed: ") + ErrnoText(err));
      return;
    }
    accepted_.fetch_add(1);
    if (options_.tcp_nodelay) {
      const int one = 1;
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    while (entries_.size() >= options_.max_pending && !admission_.empty()) EvictOldest();
    auto connection = std::make_unique<GateConnection>();
    connection->fd = std::move(fd);
    Admit(std::move(connection), Phase::kHead);
  }
}

void ConnectionGate::Admit(std::unique_ptr<GateConnection> connection, Phase phase) {
  const int fd = connection->fd.get();
  Entry entry;
  entry.connection = std::move(connection);
  entry.phase = phase;
  entry.order = next_order_++;
  const auto wait = phase == Phase::kIdle     ? options_.keep_alive_timeout
                    : phase == Phase::kLinger ? options_.linger
                                              : options_.header_timeout;
  if (phase == Phase::kLinger) {
    entry.connection->buffer.clear();
    ::shutdown(fd, SHUT_WR);
  }
  auto [it, inserted] = entries_.emplace(fd, std::move(entry));
  if (!inserted) return;  // cannot happen (an fd is in one place at a time); `entry` closes it
  admission_.emplace(it->second.order, fd);
  SetDeadline(it->second, SteadyClock::now() + wait);
  epoll_event ev{};
  // Edge-triggered: each arrival of bytes wakes the gate once; it reads until EAGAIN.
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
  ev.data.fd = fd;
  if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
    Close(fd);
    return;
  }
  // Bytes may already be here (pipelined, or read ahead by the worker): look now.
  OnReadable(fd);
}

void ConnectionGate::SetDeadline(Entry& entry, SteadyClock::time_point deadline) {
  const int fd = entry.connection->fd.get();
  deadlines_.erase({entry.deadline, fd});
  entry.deadline = deadline;
  deadlines_.emplace(deadline, fd);
}

void ConnectionGate::OnReadable(int fd) {
  auto it = entries_.find(fd);
  if (it == entries_.end()) return;
  if (it->second.phase == Phase::kLinger) {
    Drain(fd);
    return;
  }
  ReadHead(it->second);
}

bool ConnectionGate::SkipLeftover(Entry& entry) {
  GateConnection& c = *entry.connection;
  const size_t from_buffer = static_cast<size_t>(std::min<uint64_t>(c.skip, c.buffer.size()));
  c.buffer.erase(0, from_buffer);
  c.skip -= from_buffer;
  std::array<char, kReadChunk> scratch{};
  while (c.skip > 0) {
    const ssize_t n =
        ::recv(c.fd.get(), scratch.data(),
               static_cast<size_t>(std::min<uint64_t>(c.skip, scratch.size())), MSG_DONTWAIT);
    if (n > 0) {
      c.skip -= static_cast<uint64_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;  // more to come
    Close(c.fd.get());
    return false;
  }
  return true;
}

void ConnectionGate::ReadHead(Entry& entry) {
  GateConnection& c = *entry.connection;
  const int fd = c.fd.get();
  if (c.skip > 0 && (!SkipLeftover(entry) || c.skip > 0)) return;
  bool peer_closed = false;
  for (;;) {
    // What is already buffered may hold a whole head (a pipelined request after a return).
    if (!c.buffer.empty()) {
      if (entry.phase == Phase::kIdle) {
        entry.phase = Phase::kHead;
        SetDeadline(entry, SteadyClock::now() + options_.header_timeout);
      }
      const HeadScan scan = ScanRequestHead(c.buffer, options_.max_head_bytes, entry.scanned);
      entry.scanned = c.buffer.size();
      if (scan.state == HeadScan::State::kTooLarge) return Refuse(fd, 431);
      if (scan.state == HeadScan::State::kComplete) {
        if (!scan.chunked && scan.content_length &&
            *scan.content_length > options_.max_body_bytes) {
          return Refuse(fd, 413);
        }
        return Dispatch(fd, scan);
      }
    }
    if (peer_closed) return Close(fd);
    const size_t room =
        options_.max_head_bytes + 1 - std::min(c.buffer.size(), options_.max_head_bytes + 1);
    if (room == 0) return Refuse(fd, 431);
    const size_t old = c.buffer.size();
    c.buffer.resize(old + std::min(room, kReadChunk));
    const ssize_t n = ::recv(fd, c.buffer.data() + old, c.buffer.size() - old, MSG_DONTWAIT);
    if (n > 0) {
      c.buffer.resize(old + static_cast<size_t>(n));
      continue;
    }
    c.buffer.resize(old);
    if (n == 0) {
      peer_closed = true;  // a head that is whole is still served (the answer may be lost)
      if (c.buffer.empty()) return Close(fd);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return;  // wait for the next arrival
    return Close(fd);
  }
}

void ConnectionGate::Drain(int fd) {
  std::array<char, kReadChunk> scratch{};
  for (;;) {
    const ssize_t n = ::recv(fd, scratch.data(), scratch.size(), MSG_DONTWAIT);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    return Close(fd);  // end of input (or an error): the client has the answer
  }
}

void ConnectionGate::TakeInbound() {
  std::vector<Inbound> inbound;
  bool stopped;
  {
    MutexLock lock(inbox_mu_);
    inbound.swap(inbox_);
    stopped = stopped_;
  }
  for (auto& in : inbound) {
    if (stopped) {
      in.connection.reset();
      continue;
    }
    in.connection->head_bytes = 0;
    if (!in.finish) {
      // A body still arriving counts against the head deadline, not the idle one.
      const Phase phase = in.connection->skip > 0 ? Phase::kHead : Phase::kIdle;
      Admit(std::move(in.connection), phase);
      continue;
    }
    Admit(std::move(in.connection), Phase::kLinger);
  }
}

void ConnectionGate::ExpireDeadlines() {
  const auto now = SteadyClock::now();
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    const int fd = deadlines_.begin()->second;
    auto it = entries_.find(fd);
    if (it == entries_.end()) {  // stale
      deadlines_.erase(deadlines_.begin());
      continue;
    }
    Entry& entry = it->second;
    if (entry.phase == Phase::kHead && !entry.connection->buffer.empty()) {
      timed_out_.fetch_add(1);
      Refuse(fd, 408);  // lingers with a fresh (short) deadline
    } else {
      Close(fd);  // idle keep-alive, a silent connection, or the end of lingering
    }
  }
}

void ConnectionGate::EvictOldest() {
  const int fd = admission_.begin()->second;
  evicted_.fetch_add(1);
  if (options_.metrics != nullptr) options_.metrics->RecordGateRejection("overflow");
  const auto now = SteadyClock::now();
  if (now - last_eviction_warning_ >= kEvictionWarningEvery) {
    last_eviction_warning_ = now;
    log::Warn(kLog, "more than " + std::to_string(options_.max_pending) +
                        " connections are waiting to send a request; closing the longest "
                        "waiting ones (" +
                        std::to_string(evicted_.load()) + " so far)");
  }
  Close(fd);
}

void ConnectionGate::Refuse(int fd, int status) {
  if (status != 408) refused_.fetch_add(1);
  if (options_.metrics != nullptr) options_.metrics->RecordGateRejection(std::to_string(status));
  const std::string body = options_.refusal_body ? options_.refusal_body(status) : std::string();
  const std::string response =
      "HTTP/1.1 " + std::to_string(status) + " " + ReasonPhrase(status) +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\n\r\n" + body;
  // Small enough for an empty socket buffer; what does not fit is dropped with the connection.
  [[maybe_unused]] ssize_t n =
      ::send(fd, response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  StartLinger(fd);
}

void ConnectionGate::StartLinger(int fd) {
  auto it = entries_.find(fd);
  if (it == entries_.end()) return;
  Entry& entry = it->second;
  entry.phase = Phase::kLinger;
  entry.connection->buffer.clear();
  entry.connection->buffer.shrink_to_fit();
  ::shutdown(fd, SHUT_WR);
  SetDeadline(entry, SteadyClock::now() + options_.linger);
  Drain(fd);
}

void ConnectionGate::Dispatch(int fd, const HeadScan& scan) {
  auto connection = Detach(fd);
  if (!connection) return;
  connection->head_bytes = scan.head_bytes;
  connection->content_length = scan.chunked ? 0 : scan.content_length.value_or(0);
  connection->chunked = scan.chunked;
  handed_off_.fetch_add(1);
  handoff_(std::move(connection));
}

std::unique_ptr<GateConnection> ConnectionGate::Detach(int fd) {
  auto it = entries_.find(fd);
  if (it == entries_.end()) return nullptr;
  ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, fd, nullptr);
  deadlines_.erase({it->second.deadline, fd});
  admission_.erase({it->second.order, fd});
  std::unique_ptr<GateConnection> connection = std::move(it->second.connection);
  entries_.erase(it);
  return connection;
}

void ConnectionGate::Close(int fd) {
  Detach(fd);  // the connection, if still here, goes with its socket
}

}  // namespace imgmcp::http
