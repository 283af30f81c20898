#include "server/http/gated_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include "common/ascii.h"
#include "common/decimal.h"
#include "common/log.h"
#include "common/posix_io.h"
#include "server/http/log_tag.h"

namespace imgmcp::http {

namespace {

// Room for chunk-size lines and CRLFs around a body of the full limit (a client that sends
// chunks of a few bytes pays for it with a smaller body).
constexpr uint64_t kFramingAllowance = uint64_t{1} << 20;
constexpr size_t kMaxResponseHeadSniff = 16 << 10;
// After an answer on a keep-alive connection its worker waits this long for the next request
// head itself: a client that waits for each answer sends the next request at once, and serving
// it on the same thread saves two thread hand-offs and the gate's bookkeeping. A head that has
// not arrived whole by then goes back to the gate with what was read.
constexpr auto kNextHeadWait = std::chrono::milliseconds(5);

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

std::chrono::milliseconds ToMs(time_t sec, time_t usec) {
  return std::chrono::milliseconds(static_cast<int64_t>(sec) * 1000 + usec / 1000);
}

// The value of header `name` in a response head (the first such line), without surrounding
// spaces; nullopt when absent.
std::optional<std::string_view> HeaderValue(std::string_view head, std::string_view name) {
  size_t pos = head.find("\r\n");
  while (pos != std::string_view::npos && pos + 2 < head.size()) {
    const size_t start = pos + 2;
    const size_t end = head.find("\r\n", start);
    const std::string_view line =
        head.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    const size_t colon = line.find(':');
    if (colon != std::string_view::npos && EqualsIgnoreAsciiCase(line.substr(0, colon), name)) {
      return TrimSpacesAndTabs(line.substr(colon + 1));
    }
    pos = end;
  }
  return std::nullopt;
}

// True when a response head carries "Connection: close".
bool SaysConnectionClose(std::string_view head) {
  auto value = HeaderValue(head, "Connection");
  return value && EqualsIgnoreAsciiCase(*value, "close");
}

// True when a response head declares a body of known, non-zero length.
bool DeclaresBody(std::string_view head) {
  auto length = HeaderValue(head, "Content-Length");
  return length && !length->empty() && *length != "0" &&
         !HeaderValue(head, "Transfer-Encoding").has_value();
}

void AddressOf(const sockaddr_storage& addr, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(addr);
    ::inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
    port = ntohs(a.sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(addr);
    ::inet_ntop(AF_INET6, &a.sin6_addr, text, sizeof text);
    port = ntohs(a.sin6_port);
  }
  ip = text;
}

// One request's view of a gated connection: the bytes the gate read ahead first, then the
// socket, never past this request's byte budget. Waits wake on Shutdown() (the stop eventfd).
class GateStream final : public httplib::Stream {
 public:
  GateStream(GateConnection& connection, int stop_fd, std::chrono::milliseconds read_timeout,
             std::chrono::milliseconds write_timeout, uint64_t byte_limit)
      : c_(connection),
        stop_fd_(stop_fd),
        read_timeout_(read_timeout),
        write_timeout_(write_timeout),
        byte_limit_(byte_limit) {}

  bool is_readable() const override {
    return offset_ < c_.buffer.size() || Wait(POLLIN, read_timeout_);
  }

  bool is_writable() const override { return Wait(POLLOUT, write_timeout_) && PeerAlive(); }

  ssize_t read(char* ptr, size_t size) override {
    // cpp-httplib reads the request line and headers one byte per call: those come from the
    // buffer the gate (or AwaitNextHead) filled, as cheaply as possible.
    if (size == 1 && offset_ < c_.buffer.size() && consumed_ < byte_limit_ && !read_done_) {
      *ptr = c_.buffer[offset_++];
      ++consumed_;
      return 1;
    }
    if (read_done_) return -1;
    if (consumed_ >= byte_limit_) {
      over_limit_ = read_done_ = true;  // the answer can still be written
      return -1;
    }
    size = static_cast<size_t>(std::min<uint64_t>(size, byte_limit_ - consumed_));
    if (offset_ < c_.buffer.size()) {
      const size_t n = std::min(size, c_.buffer.size() - offset_);
      std::memcpy(ptr, c_.buffer.data() + offset_, n);
      offset_ += n;
      consumed_ += n;
      return static_cast<ssize_t>(n);
    }
    for (;;) {
      const ssize_t n = ::recv(c_.fd.get(), ptr, size, MSG_DONTWAIT);
      if (n > 0) {
        consumed_ += static_cast<uint64_t>(n);
        return n;
      }
      if (n == 0) {
        read_done_ = true;  // the client will send nothing more (it may still read the answer)
        return 0;
      }
      if (errno == EINTR) continue;
      if ((errno == EAGAIN || errno == EWOULDBLOCK) && Wait(POLLIN, read_timeout_)) continue;
      read_done_ = true;
      return -1;
    }
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (write_failed_) return -1;
    if (!head_seen_) {
      SniffResponseHead(ptr, size);
      if (hold_head_) {  // leaves with the body's first bytes, in one segment
        held_.assign(ptr, size);
        hold_head_ = false;
        return static_cast<ssize_t>(size);
      }
    }
    return Send(ptr, size);
  }

  // Sends a response head still held back (a response whose body never came: HEAD).
  void Flush() {
    if (!held_.empty() && !write_failed_) Send(nullptr, 0);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    if (c_.remote.port < 0) c_.remote = LookUp(::getpeername);
    ip = c_.remote.ip;
    port = c_.remote.port;
  }

  void get_local_ip_and_port(std::string& ip, int& port) const override {
    if (c_.local.port < 0) c_.local = LookUp(::getsockname);
    ip = c_.local.ip;
    port = c_.local.port;
  }

  int socket() const override { return c_.fd.get(); }

  // Drops what this request consumed from the connection's read-ahead buffer.
  void Release() { c_.buffer.erase(0, offset_); }

  // Body bytes of this request read so far.
  uint64_t body_consumed() const {
    return consumed_ > c_.head_bytes ? consumed_ - c_.head_bytes : 0;
  }

  // The connection cannot carry another request: the answer said "Connection: close", or the
  // request hit its byte budget, a timeout, an error or the end of input.
  bool must_close() const { return says_close_ || over_limit_ || read_done_ || write_failed_; }

 private:
  // Sends the held head (if any), then `size` bytes at `ptr`, in as few segments as the socket
  // takes. Returns how many of `size` left, or -1 when none did.
  ssize_t Send(const char* ptr, size_t size) {
    const size_t total = held_.size() + size;
    size_t done = 0;
    while (done < total) {
      iovec parts[2];
      size_t count = 0;
      if (done < held_.size()) parts[count++] = {held_.data() + done, held_.size() - done};
      const size_t body_done = done > held_.size() ? done - held_.size() : 0;
      if (size > body_done) parts[count++] = {const_cast<char*>(ptr) + body_done, size - body_done};
      msghdr message{};
      message.msg_iov = parts;
      message.msg_iovlen = count;
      const ssize_t n = ::sendmsg(c_.fd.get(), &message, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        done += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && Wait(POLLOUT, write_timeout_)) {
        continue;
      }
      write_failed_ = true;
      const size_t sent = done > held_.size() ? done - held_.size() : 0;
      held_.clear();
      return sent > 0 ? static_cast<ssize_t>(sent) : -1;
    }
    held_.clear();
    return static_cast<ssize_t>(size);
  }

  // One end's address through getpeername or getsockname (port 0 when it cannot be had).
  GateConnection::Address LookUp(int (*get_name)(int, sockaddr*, socklen_t*)) const {
    GateConnection::Address address;
    address.port = 0;
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (get_name(c_.fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      AddressOf(addr, address.ip, address.port);
    }
    return address;
  }

  // True when `events` is ready on the socket within `timeout`; false on timeout or Shutdown().
  bool Wait(short events, std::chrono::milliseconds timeout) const {
    pollfd fds[2] = {{c_.fd.get(), events, 0}, {stop_fd_, POLLIN, 0}};
    const int timeout_ms = static_cast<int>(std::min<int64_t>(timeout.count(), 1 << 30));
    for (;;) {
      const int n = ::poll(fds, stop_fd_ >= 0 ? 2 : 1, timeout_ms);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      if (fds[1].revents != 0) return false;
      return true;  // ready, or an error the next call reports
    }
  }

  // As httplib's own check: a peer that has hung up reads as end of input.
  bool PeerAlive() const {
    pollfd fd = {c_.fd.get(), POLLIN, 0};
    if (::poll(&fd, 1, 0) <= 0) return true;
    char byte;
    const ssize_t n = ::recv(c_.fd.get(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
  }

  void SniffResponseHead(const char* ptr, size_t size) {
    if (head_seen_) return;
    response_head_.append(ptr, std::min(size, kMaxResponseHeadSniff - response_head_.size()));
    const size_t end = response_head_.find("\r\n\r\n");
    if (end == std::string::npos && response_head_.size() < kMaxResponseHeadSniff) return;
    if (response_head_.compare(0, 10, "HTTP/1.1 1") == 0 && end != std::string::npos) {
      response_head_.erase(0, end + 4);  // an interim 100 Continue: the real head follows
      return;
    }
    says_close_ = SaysConnectionClose(response_head_);
    // httplib writes a head in one piece and the body of a fixed-length answer right after it.
    hold_head_ = end != std::string::npos && end + 4 == size && response_head_.size() == size &&
                 DeclaresBody(response_head_);
    head_seen_ = true;
    response_head_.clear();
    response_head_.shrink_to_fit();
  }

  GateConnection& c_;
  const int stop_fd_;
  const std::chrono::milliseconds read_timeout_;
  const std::chrono::milliseconds write_timeout_;
  const uint64_t byte_limit_;
  size_t offset_ = 0;      // consumed from c_.buffer
  uint64_t consumed_ = 0;  // of this request, buffer and socket
  bool over_limit_ = false;
  bool read_done_ = false;  // end of input, a read error or timeout, or the byte limit
  bool write_failed_ = false;
  bool says_close_ = false;
  bool head_seen_ = false;
  bool hold_head_ = false;  // the head just sniffed waits for its body (write() holds it)
  std::string response_head_;
  std::string held_;  // a response head not sent yet
};

// The request this worker thread serves (ServeRequest sets it around httplib's processing).
thread_local const ServedRequest* t_current_request = nullptr;

// Makes `request` the calling thread's current request for the scope's lifetime.
class CurrentRequestScope {
 public:
  explicit CurrentRequestScope(const ServedRequest* request)
      : previous_(std::exchange(t_current_request, request)) {}
  ~CurrentRequestScope() { t_current_request = previous_; }
  CurrentRequestScope(const CurrentRequestScope&) = delete;
  CurrentRequestScope& operator=(const CurrentRequestScope&) = delete;

 private:
  const ServedRequest* previous_;
};

}  // namespace

const ServedRequest* CurrentRequest() { return t_current_request; }

GatedServer::GatedServer() : stop_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

GatedServer::~GatedServer() { Shutdown(); }

Result<int> GatedServer::Bind(const std::string& host, int port) {
  if (listen_fd_.valid()) return MakeError(ErrorCode::kFailedPrecondition, "already bound");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "cannot resolve '" + host + "': " + ::gai_strerror(rc));
  }
  std::string failure = "no address";
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
    if (!fd.valid()) {
      failure = ErrnoText(errno);
      continue;
    }
    // SO_REUSEADDR lets a restarted server bind over connections in TIME_WAIT; unlike
    // SO_REUSEPORT (httplib's default) it never lets two servers share a listening port.
    const int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ai->ai_family == AF_INET6) {
      const int zero = 0;
      ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    }
    if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd.get(), SOMAXCONN) != 0) {
      failure = ErrnoText(errno);
      continue;
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &len);
    std::string ip;
    int bound_port = 0;
    AddressOf(bound, ip, bound_port);
    listen_fd_ = std::move(fd);
    ::freeaddrinfo(found);
    return bound_port;
  }
  ::freeaddrinfo(found);
  return MakeError(ErrorCode::kUnavailable, failure);
}

bool GatedServer::Serve(GateOptions options, size_t workers,
                        const std::function<void()>& on_serving) {
  if (!listen_fd_.valid()) return false;
  options.keep_alive_timeout = std::chrono::seconds(keep_alive_timeout_sec_);
  options.max_body_bytes = payload_max_length_;
  max_head_bytes_ = options.max_head_bytes;
  auto gate = ConnectionGate::Create(listen_fd_.get(), std::move(options),
                                     [this](auto connection) { Enqueue(std::move(connection)); });
  if (!gate.ok()) {
    log::Error(kLog, "cannot start serving: " + gate.error().message);
    return false;
  }
  ConnectionGate* running = nullptr;  // gate_, which only this thread sets and resets
  {
    MutexLock lock(mu_);
    if (shutting_down_) return false;
    gate_ = std::move(*gate);
    running = gate_.get();
  }
  // httplib ends streaming responses once this is invalid (Shutdown() resets it).
  svr_sock_ = listen_fd_.get();
  for (size_t i = 0; i < std::max<size_t>(workers, 1); ++i) {
    workers_.emplace_back([this] { WorkerLoop(); });
  }
  bool serving = false;
  {
    MutexLock lock(mu_);
    serving = !shutting_down_;
    if (shutting_down_) gate_->Stop();
  }
  if (serving && on_serving) on_serving();
  running->Run();
  const bool stopped_on_request = [this] {
    MutexLock lock(mu_);
    return shutting_down_;
  }();
  Shutdown();  // the same teardown when the gate failed on its own
  for (auto& worker : workers_) worker.join();
  workers_.clear();
  std::deque<std::unique_ptr<GateConnection>> left;
  {
    MutexLock lock(mu_);
    left.swap(queue_);
  }
  left.clear();  // never served: each closes its socket
  // No worker runs any more: nothing else touches the gate.
  std::unique_ptr<ConnectionGate> done;
  {
    MutexLock lock(mu_);
    done = std::move(gate_);
  }
  done.reset();
  return stopped_on_request;
}

void GatedServer::Shutdown() {
  {
    MutexLock lock(mu_);
    shutting_down_ = true;
    if (gate_) gate_->Stop();
  }
  svr_sock_ = INVALID_SOCKET;
  if (stop_fd_.valid()) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(stop_fd_.get(), &one, sizeof one);
  }
  cv_.notify_all();
}

GateStats GatedServer::gate_stats() const {
  MutexLock lock(mu_);
  return gate_ ? gate_->Stats() : GateStats{};
}

void GatedServer::Enqueue(std::unique_ptr<GateConnection> connection) {
  {
    MutexLock lock(mu_);
    if (!shutting_down_) {
      queue_.push_back(std::move(connection));
      connection = nullptr;
    }
  }
  if (connection) return;  // not served: closed as it goes
  cv_.notify_one();
}

void GatedServer::WorkerLoop() {
  for (;;) {
    std::unique_ptr<GateConnection> connection;
    ConnectionGate* gate = nullptr;
    {
      MutexLock lock(mu_);
      ++idle_workers_;
      cv_.wait(lock, [this] {
        mu_.AssertHeld();
        return shutting_down_ || !queue_.empty();
      });
      --idle_workers_;
      if (shutting_down_) return;
      connection = std::move(queue_.front());
      queue_.pop_front();
      gate = gate_.get();
    }
    ServeConnection(*gate, std::move(connection));
  }
}

void GatedServer::ServeConnection(ConnectionGate& gate,
                                  std::unique_ptr<GateConnection> connection) {
  // The gate outlives every worker (Serve() joins them before resetting gate_).
  while (ServeRequest(*connection)) {
    if (!AwaitNextHead(*connection)) return gate.Return(std::move(connection));
  }
  gate.Finish(std::move(connection));
}

bool GatedServer::ServeRequest(GateConnection& connection) {
  connection.requests += 1;
  const bool last = connection.requests >= keep_alive_max_count_;
  bool closed_by_client = false;
  bool must_close = false;
  bool ok = false;
  uint64_t body_read = 0;
  {
    // The head stays at the front of connection.buffer until stream.Release() below.
    const std::string_view head(connection.buffer.data(), connection.head_bytes);
    const ServedRequest served{head, RequestHeaders::Parse(head), connection.fd.get(), {}};
    CurrentRequestScope current(&served);
    GateStream stream(connection, stop_fd_.get(), ToMs(read_timeout_sec_, read_timeout_usec_),
                      ToMs(write_timeout_sec_, write_timeout_usec_),
                      SaturatingAdd(SaturatingAdd(connection.head_bytes, payload_max_length_),
                                    kFramingAllowance));
    ok = process_request(stream, last, closed_by_client, nullptr);
    stream.Flush();
    stream.Release();
    must_close = stream.must_close();
    body_read = stream.body_consumed();
  }
  // A handler that answered without reading the body (401, 403, 406…) leaves it on the
  // connection: a declared length is skipped by the gate, an unread chunked body ends it.
  if (connection.chunked && body_read == 0) must_close = true;
  connection.skip =
      connection.content_length > body_read ? connection.content_length - body_read : 0;
  connection.head_bytes = 0;
  return ok && !last && !closed_by_client && !must_close && svr_sock_ != INVALID_SOCKET;
}

bool GatedServer::AwaitNextHead(GateConnection& connection) {
  if (connection.skip > 0) return false;  // the gate discards the unread body first
  {
    // Never while a connection waits for a worker, nor as the last idle worker.
    MutexLock lock(mu_);
    if (shutting_down_ || !queue_.empty() || idle_workers_ == 0) return false;
  }
  const auto deadline = std::chrono::steady_clock::now() + kNextHeadWait;
  for (;;) {
    const HeadScan scan = ScanRequestHead(connection.buffer, max_head_bytes_);
    if (scan.state == HeadScan::State::kComplete) {
      // The gate refuses a body it would never read (413) itself.
      if (!scan.chunked && scan.content_length.value_or(0) > payload_max_length_) return false;
      connection.head_bytes = scan.head_bytes;
      connection.content_length = scan.chunked ? 0 : scan.content_length.value_or(0);
      connection.chunked = scan.chunked;
      return true;
    }
    if (scan.state == HeadScan::State::kTooLarge) return false;  // the gate answers 431
    if (!ReadMore(connection, deadline)) return false;
  }
}

bool GatedServer::ReadMore(GateConnection& connection,
                           std::chrono::steady_clock::time_point deadline) {
  char chunk[4096];
  for (;;) {
    // Wait first: after an answer the next request is hardly ever here yet.
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd fds[2] = {{connection.fd.get(), POLLIN, 0}, {stop_fd_.get(), POLLIN, 0}};
    const int ready = ::poll(fds, 2, static_cast<int>(std::max<int64_t>(left.count(), 0)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0 || fds[1].revents != 0) return false;
    const ssize_t n = ::recv(connection.fd.get(), chunk, sizeof chunk, MSG_DONTWAIT);
    if (n > 0) {
      connection.buffer.append(chunk, static_cast<size_t>(n));
      return true;
    }
    if (n == 0 || (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)) return false;
  }
}

BodyRead ReadCappedBody(const RequestHeaders& headers, const httplib::ContentReader& reader,
                        size_t max_bytes, std::string* body) {
  body->clear();
  const auto length = headers.Get(Header::kContentLength);
  const auto encoding = headers.Get(Header::kTransferEncoding);
  if (length && !(encoding && EqualsIgnoreAsciiCase(*encoding, "chunked"))) {
    // Leading digits, as httplib reads them (0 when there are none; too many saturate).
    const std::string_view digits = length->substr(0, length->find_first_not_of("0123456789"));
    const uint64_t declared = ParseDecimalSaturating<uint64_t>(digits).value_or(0);
    if (declared > max_bytes) return BodyRead::kTooLarge;
    body->reserve(static_cast<size_t>(declared));
  } else {
    // One allocation of the limit: pages are touched only as bytes arrive, and no regrowth
    // copies the buffer (so the peak stays the body's size).
    body->reserve(max_bytes);
  }
  bool too_large = false;
  const bool read = reader([&](const char* data, size_t n) {
    if (n > max_bytes - body->size()) {
      too_large = true;
      return false;
    }
    body->append(data, n);
    return true;
  });
  if (too_large) return BodyRead::kTooLarge;
  return read ? BodyRead::kOk : BodyRead::kUnreadable;
}

}  // namespace imgmcp::http
