#include "mcp/stdio_transport.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/log.h"
#include "common/posix_io.h"
#include "common/unique_fd.h"
#include "mcp/connection.h"
#include "mcp/json_rpc.h"
#include "mcp/line_reader.h"
#include "mcp/server.h"

namespace imgmcp::mcp {

namespace {
constexpr char kStdioLog[] = "stdio";
}  // namespace

StdioTransport::StdioTransport(McpServer& server, StdioOptions options)
    : server_(server), options_(std::move(options)) {}

namespace {

// poll's timeout until `when`: 0 once it has passed.
int MillisecondsUntil(std::chrono::steady_clock::time_point when) {
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(when - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

}  // namespace

bool StdioTransport::Run() {
  std::shared_ptr<Connection> connection = server_.Connect(*this);
  LineSplitter splitter(
      options_.max_message_bytes,
      [&connection](std::string_view line) { connection->HandleMessage(line); },
      [this] {
        log::Warn(kStdioLog, "refused a message over " +
                                 std::to_string(options_.max_message_bytes) + " bytes");
        WriteLine(ErrorResponseText(
            nullptr, InvalidRequest("message exceeds the limit of " +
                                    std::to_string(options_.max_message_bytes) + " bytes")));
      });

  ReadUntilEnd(splitter);
  if (!options_.drain.stop_requested()) splitter.Finish();  // a line cut short is not a message

  // EOF: subscriptions end at once; running calls and tasks may finish briefly (a piped script
  // may be waiting for their answers), then what is left is cancelled.
  connection->EndSubscriptions();
  bool idle = WaitForCallsAndTasks(*connection);
  if (!idle) {
    const bool draining = options_.drain.stop_requested();
    log::Info(kStdioLog, std::string(draining ? "drain timeout" : "stdin closed") +
                             "; cancelling " + std::to_string(connection->InFlightCount()) +
                             " call(s) and " + std::to_string(server_.tasks().Running()) +
                             " task(s) still running; nothing of them is committed");
    connection->CancelAll();
    server_.tasks().Shutdown(
        draining ? "the server was stopped (SIGTERM or SIGINT) before this task finished; "
                   "nothing was committed"
                 : "the server's input closed and it exited before this task finished; nothing "
                   "was committed");
    const auto deadline = std::chrono::steady_clock::now() + options_.cancel_grace;
    idle = connection->WaitIdle(options_.cancel_grace) && server_.tasks().WaitIdle(deadline);
  }
  if (!idle) log::Warn(kStdioLog, "calls still running after cancellation; exiting without them");
  connection->Close();
  return idle;
}

void StdioTransport::ReadUntilEnd(LineSplitter& splitter) {
  // The drain wakes the reader through an eventfd: it waits on the input and on that.
  const UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  std::stop_callback on_drain(options_.drain, [&wake] {
    const uint64_t one = 1;
    if (wake.valid()) (void)!::write(wake.get(), &one, sizeof one);
  });
  // Left uninitialised: zero-filling would make the whole chunk resident at start-up, while
  // read() touches only the pages a message fills (small messages: one page).
  const std::unique_ptr<char[]> buffer(new char[options_.read_chunk_bytes]);
  std::function<void()> on_settled = options_.on_settled;
  const auto settle = [&on_settled] {
    if (on_settled) std::exchange(on_settled, nullptr)();
  };
  const auto settle_by = std::chrono::steady_clock::now() + options_.settle_after;
  while (!options_.drain.stop_requested()) {
    pollfd fds[2] = {{options_.in_fd, POLLIN, 0}, {wake.valid() ? wake.get() : -1, POLLIN, 0}};
    const int ready = ::poll(fds, 2, on_settled ? MillisecondsUntil(settle_by) : -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      log::Error(kStdioLog, std::string("waiting for stdin failed: ") + ErrnoText(errno));
      return;
    }
    if (ready == 0) settle();           // no input yet: settled all the same
    if (fds[0].revents == 0) continue;  // the drain: the loop's condition ends it
    const ssize_t n = ::read(options_.in_fd, buffer.get(), options_.read_chunk_bytes);
    if (n > 0) {
      splitter.Feed(std::string_view(buffer.get(), static_cast<size_t>(n)));
      settle();
      continue;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) log::Error(kStdioLog, std::string("reading stdin failed: ") + ErrnoText(errno));
    return;
  }
}

// Waits up to the grace of how reading ended (a drain's stop_grace, else finish_grace) for the
// connection's calls and the server's tasks. A drain asked while the EOF grace runs (SIGINT and
// the end of input together) wakes the wait, and the calls get the drain's grace from then.
bool StdioTransport::WaitForCallsAndTasks(Connection& connection) {
  const auto until_idle = [&](std::chrono::steady_clock::time_point deadline,
                              std::stop_token stop) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    return connection.WaitIdle(std::max(left, std::chrono::milliseconds(0)), stop) &&
           server_.tasks().WaitIdle(deadline, stop);
  };
  const auto now = std::chrono::steady_clock::now();
  if (!options_.drain.stop_requested()) {
    if (until_idle(now + options_.finish_grace, options_.drain)) return true;
    if (!options_.drain.stop_requested()) return false;  // the EOF grace ran out
    log::Info(kStdioLog, "a drain was asked while input ended: calls in flight may finish within " +
                             std::to_string(options_.stop_grace.count() / 1000) + " s");
  }
  return until_idle(std::chrono::steady_clock::now() + options_.stop_grace, {});
}

void StdioTransport::Send(OutgoingMessage message) { WriteLine(message.json); }

void StdioTransport::WriteLine(std::string_view text) {
  MutexLock lock(write_mu_);
  if (broken_) return;
  static const char kNewline[] = "\n";
  iovec parts[2] = {{const_cast<char*>(text.data()), text.size()},
                    {const_cast<char*>(kNewline), 1}};
  int first = 0;
  while (first < 2) {
    const ssize_t n = ::writev(options_.out_fd, parts + first, 2 - first);  // stdout-ok
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {  // non-blocking stdout: wait until writable
        pollfd pfd{options_.out_fd, POLLOUT, 0};
        ::poll(&pfd, 1, 1000);
        continue;
      }
      log::Error(kStdioLog, std::string("writing stdout failed: ") + ErrnoText(errno) +
                                "; dropping further messages");
      broken_ = true;
      return;
    }
    size_t written = static_cast<size_t>(n);
    while (first < 2 && written >= parts[first].iov_len) {
      written -= parts[first].iov_len;
      ++first;
    }
    if (first < 2) {
      parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + written;
      parts[first].iov_len -= written;
    }
  }
}

}  // namespace imgmcp::mcp
