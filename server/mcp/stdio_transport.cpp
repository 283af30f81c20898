#include "server/mcp/stdio_transport.h"

#include <poll.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/log.h"
#include "server/mcp/connection.h"
#include "server/mcp/json_rpc.h"
#include "server/mcp/line_reader.h"
#include "server/mcp/server.h"

namespace imgmcp::mcp {

namespace {
constexpr char kStdioLog[] = "stdio";
}  // namespace

StdioTransport::StdioTransport(McpServer& server, StdioOptions options)
    : server_(server), options_(options) {}

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

  // Left uninitialised: zero-filling would make the whole chunk resident at start-up, while
  // read() touches only the pages a message fills (small messages: one page).
  const std::unique_ptr<char[]> buffer(new char[options_.read_chunk_bytes]);
  const auto stopped = [this] { return options_.stop_reading && options_.stop_reading->load(); };
  while (!stopped()) {
    const ssize_t n = ::read(options_.in_fd, buffer.get(), options_.read_chunk_bytes);
    if (n > 0) {
      splitter.Feed(std::string_view(buffer.get(), static_cast<size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) log::Error(kStdioLog, std::string("reading stdin failed: ") + std::strerror(errno));
    break;
  }
  if (!stopped()) splitter.Finish();  // a line cut short by a drain is not a message

  // EOF: subscriptions end at once; running calls may finish briefly (a piped script may be
  // waiting for their answers), then what is left is cancelled.
  connection->EndSubscriptions();
  bool idle = connection->WaitIdle(stopped() ? options_.stop_grace : options_.finish_grace);
  if (!idle) {
    log::Info(kStdioLog, std::string(stopped() ? "drain timeout" : "stdin closed") +
                             "; cancelling " + std::to_string(connection->InFlightCount()) +
                             " call(s) still running");
    connection->CancelAll();
    idle = connection->WaitIdle(options_.cancel_grace);
  }
  if (!idle) log::Warn(kStdioLog, "calls still running after cancellation; exiting without them");
  connection->Close();
  return idle;
}

void StdioTransport::Send(OutgoingMessage message) { WriteLine(message.json); }

void StdioTransport::WriteLine(std::string_view text) {
  std::lock_guard<std::mutex> lock(write_mu_);
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
      log::Error(kStdioLog, std::string("writing stdout failed: ") + std::strerror(errno) +
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
