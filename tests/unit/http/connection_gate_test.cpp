#include "server/http/connection_gate.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace imgmcp::http {
namespace {

using namespace std::chrono_literals;

TEST(ScanRequestHeadTest, FindsTheEndAndTheDeclaredLength) {
  const std::string head =
      "POST /mcp HTTP/1.1\r\nHost: x\r\ncontent-length:  42 \r\nAccept: */*\r\n\r\n";
  HeadScan scan = ScanRequestHead(head + "{\"body\"", 1024);
  EXPECT_EQ(scan.state, HeadScan::State::kComplete);
  EXPECT_EQ(scan.head_bytes, head.size());
  ASSERT_TRUE(scan.content_length.has_value());
  EXPECT_EQ(*scan.content_length, 42u);
  EXPECT_FALSE(scan.chunked);
}

TEST(ScanRequestHeadTest, IncompleteTooLargeChunkedAndSaturated) {
  EXPECT_EQ(ScanRequestHead("POST /mcp HTTP/1.1\r\nHost: x\r\n", 1024).state,
            HeadScan::State::kIncomplete);
  EXPECT_EQ(ScanRequestHead(std::string(64, 'a'), 64).state, HeadScan::State::kTooLarge);
  EXPECT_EQ(ScanRequestHead(std::string(70, 'a') + "\r\n\r\n", 64).state,
            HeadScan::State::kTooLarge);
  HeadScan chunked = ScanRequestHead("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n", 1024);
  EXPECT_TRUE(chunked.chunked);
  EXPECT_FALSE(chunked.content_length.has_value());
  HeadScan huge = ScanRequestHead(
      "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999999\r\n\r\n", 1024);
  ASSERT_TRUE(huge.content_length.has_value());
  EXPECT_EQ(*huge.content_length, UINT64_MAX);
  HeadScan bad = ScanRequestHead("POST / HTTP/1.1\r\nContent-Length: 12a\r\n\r\n", 1024);
  EXPECT_FALSE(bad.content_length.has_value());
  // A blank line split across two arrivals is found when scanning resumes.
  const std::string split = "GET / HTTP/1.1\r\nA: b\r\n\r\n";
  EXPECT_EQ(ScanRequestHead(split, 1024, split.size() - 2).state, HeadScan::State::kComplete);
}

// A gate on a loopback port, run on its own thread; handed-off connections are queued here.
class ConnectionGateTest : public ::testing::Test {
 protected:
  void Start(GateOptions options) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(listen_fd_, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::listen(listen_fd_, 64), 0);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    options.refusal_body = [](int status) { return "{\"status\":" + std::to_string(status) + "}"; };
    auto gate = ConnectionGate::Create(listen_fd_, std::move(options),
                                       [this](std::unique_ptr<GateConnection> c) {
                                         std::lock_guard<std::mutex> lock(mu_);
                                         handed_.push_back(std::move(c));
                                         cv_.notify_all();
                                       });
    ASSERT_TRUE(gate.ok()) << gate.error().message;
    gate_ = std::move(*gate);
    thread_ = std::thread([this] { gate_->Run(); });
  }

  void TearDown() override {
    if (gate_) {
      gate_->Stop();
      thread_.join();
      gate_.reset();
    }
    handed_.clear();  // each closes its socket
    for (int fd : clients_) ::close(fd);
    if (listen_fd_ >= 0) ::close(listen_fd_);
  }

  int Connect(const std::string& send = "") {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    if (!send.empty()) {
      EXPECT_EQ(::send(fd, send.data(), send.size(), 0), ssize_t(send.size()));
    }
    clients_.push_back(fd);
    return fd;
  }

  std::unique_ptr<GateConnection> WaitHandoff(std::chrono::milliseconds timeout = 5s) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, timeout, [this] { return !handed_.empty(); })) return nullptr;
    auto c = std::move(handed_.front());
    handed_.pop_front();
    return c;
  }

  size_t HandedCount() {
    std::lock_guard<std::mutex> lock(mu_);
    return handed_.size();
  }

  // Everything the server sends until it closes (or `timeout`); `closed` says whether it did.
  static std::string ReadUntilClosed(int fd, bool* closed, std::chrono::milliseconds timeout) {
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    *closed = false;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return out;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return out;
      char buf[4096];
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) {
        *closed = true;
        return out;
      }
      out.append(buf, static_cast<size_t>(n));
    }
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::unique_ptr<ConnectionGate> gate_;
  std::thread thread_;
  std::vector<int> clients_;
  std::mutex mu_;  // guards handed_
  std::condition_variable cv_;
  std::deque<std::unique_ptr<GateConnection>> handed_;
};

TEST_F(ConnectionGateTest, HandsOffOnlyWholeHeadsWithWhatWasReadAhead) {
  Start(GateOptions{});
  const int fd = Connect("POST /mcp HTTP/1.1\r\nHost: a\r\n");
  EXPECT_EQ(WaitHandoff(200ms), nullptr);  // half a head: no worker for it
  const std::string rest = "Content-Length: 2\r\n\r\n{}";
  ASSERT_EQ(::send(fd, rest.data(), rest.size(), 0), ssize_t(rest.size()));
  auto c = WaitHandoff();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->head_bytes, c->buffer.find("\r\n\r\n") + 4);
  EXPECT_EQ(c->buffer.substr(0, 4), "POST");
  handed_.push_back(std::move(c));  // closed by TearDown
}

TEST_F(ConnectionGateTest, APartialHeadGets408AtTheDeadlineAndASilentOneIsClosed) {
  GateOptions options;
  options.header_timeout = 300ms;
  options.linger = 200ms;
  Start(options);
  const int partial = Connect("GET / HTTP/1.1\r\n");
  const int silent = Connect();
  bool closed = false;
  const std::string answer = ReadUntilClosed(partial, &closed, 5s);
  EXPECT_TRUE(closed);
  EXPECT_EQ(answer.rfind("HTTP/1.1 408", 0), 0u) << answer;
  EXPECT_NE(answer.find("{\"status\":408}"), std::string::npos);
  EXPECT_EQ(ReadUntilClosed(silent, &closed, 5s), "");
  EXPECT_TRUE(closed);
  EXPECT_EQ(gate_->Stats().timed_out, 1u);
}

TEST_F(ConnectionGateTest, TheDeadlineIsTotalNotPerArrival) {
  GateOptions options;
  options.header_timeout = 400ms;
  options.linger = 100ms;
  Start(options);
  const int fd = Connect("GET / HTTP/1.1\r\nX: ");
  const auto started = std::chrono::steady_clock::now();
  bool closed = false;
  while (!closed && std::chrono::steady_clock::now() - started < 5s) {
    ::send(fd, "a", 1, MSG_NOSIGNAL);  // every 50 ms: each wait is short, the total is not
    ReadUntilClosed(fd, &closed, 50ms);
  }
  EXPECT_TRUE(closed);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
}

TEST_F(ConnectionGateTest, BeyondMaxPendingTheLongestWaitingIsClosed) {
  GateOptions options;
  options.max_pending = 3;
  Start(options);
  std::vector<int> fds;
  // The kernel's accept queue is first in, first out: admission order is connect order.
  for (int i = 0; i < 5; ++i) fds.push_back(Connect("GET / HTTP/1.1\r\n"));
  bool closed = false;
  ReadUntilClosed(fds[0], &closed, 5s);
  EXPECT_TRUE(closed);
  ReadUntilClosed(fds[1], &closed, 5s);
  EXPECT_TRUE(closed);
  ReadUntilClosed(fds[4], &closed, 100ms);
  EXPECT_FALSE(closed);
  EXPECT_EQ(gate_->Stats().evicted, 2u);
  // A real client still gets through.
  Connect("GET / HTTP/1.1\r\n\r\n");
  EXPECT_NE(WaitHandoff(), nullptr);
}

TEST_F(ConnectionGateTest, RefusesAnOversizedContentLengthAndAnOversizedHead) {
  GateOptions options;
  options.max_body_bytes = 1000;
  options.max_head_bytes = 256;
  options.linger = 200ms;
  Start(options);
  const int big_body = Connect("POST /mcp HTTP/1.1\r\nContent-Length: 1001\r\n\r\n");
  const int big_head = Connect("GET / HTTP/1.1\r\nX: " + std::string(300, 'a'));
  const int chunked =
      Connect("POST /mcp HTTP/1.1\r\nContent-Length: 5000\r\nTransfer-Encoding: chunked\r\n\r\n");
  bool closed = false;
  EXPECT_EQ(ReadUntilClosed(big_body, &closed, 5s).rfind("HTTP/1.1 413", 0), 0u);
  EXPECT_TRUE(closed);
  EXPECT_EQ(ReadUntilClosed(big_head, &closed, 5s).rfind("HTTP/1.1 431", 0), 0u);
  EXPECT_TRUE(closed);
  // Chunked framing wins over Content-Length (as in the HTTP parser): the body cap applies later.
  EXPECT_NE(WaitHandoff(), nullptr);
  (void)chunked;
}

TEST_F(ConnectionGateTest, AReturnedConnectionWithAPipelinedHeadIsHandedOffAgain) {
  Start(GateOptions{});
  Connect("GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n");
  auto c = WaitHandoff();
  ASSERT_NE(c, nullptr);
  // What a worker does after answering the first request: drop its bytes, give it back.
  c->buffer.erase(0, c->head_bytes);
  c->requests = 1;
  gate_->Return(std::move(c));
  auto again = WaitHandoff();
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->buffer.substr(0, again->head_bytes), "GET /b HTTP/1.1\r\n\r\n");
  EXPECT_EQ(again->requests, 1u);
  handed_.push_back(std::move(again));
}

TEST_F(ConnectionGateTest, AnUnreadBodyIsSkippedBeforeTheNextHead) {
  Start(GateOptions{});
  const int fd = Connect("POST /a HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123");
  auto c = WaitHandoff();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->content_length, 10u);
  // The worker answered without reading the body.
  c->buffer.erase(0, c->head_bytes);
  c->skip = 10;
  gate_->Return(std::move(c));
  const std::string rest = "456789GET /b HTTP/1.1\r\n\r\n";
  ASSERT_EQ(::send(fd, rest.data(), rest.size(), 0), ssize_t(rest.size()));
  auto next = WaitHandoff();
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(next->buffer.substr(0, next->head_bytes), "GET /b HTTP/1.1\r\n\r\n");
  EXPECT_EQ(next->skip, 0u);
  handed_.push_back(std::move(next));
}

TEST_F(ConnectionGateTest, AnIdleKeepAliveConnectionIsClosedAfterTheKeepAliveTimeout) {
  GateOptions options;
  options.keep_alive_timeout = 200ms;
  Start(options);
  const int fd = Connect("GET / HTTP/1.1\r\n\r\n");
  auto c = WaitHandoff();
  ASSERT_NE(c, nullptr);
  c->buffer.erase(0, c->head_bytes);
  gate_->Return(std::move(c));
  bool closed = false;
  EXPECT_EQ(ReadUntilClosed(fd, &closed, 5s), "");  // closed silently: no request was started
  EXPECT_TRUE(closed);
}

}  // namespace
}  // namespace imgmcp::http
