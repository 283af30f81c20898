// The stdio transport: newline-delimited JSON-RPC on stdin/stdout (docs/design.md §2).
//
// Run() is the reader: it reads the input fd in chunks on the calling thread and hands each line
// to the Connection (tool calls go to the worker pool, so ping and notifications/cancelled are
// read while calls run). Send() is the single writer: the core's compact JSON text plus "\n",
// written whole under one mutex with writev, from any thread. Logs go to stderr only.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <stop_token>
#include <string_view>

#include "common/json.h"
#include "common/thread_annotations.h"
#include "mcp/message_sink.h"

namespace imgmcp::mcp {

class Connection;
class McpServer;

struct StdioOptions {
  int in_fd = 0;
  int out_fd = 1;
  size_t max_message_bytes = size_t{64} << 20;  // larger lines are refused (-32600, id null)
  size_t read_chunk_bytes = size_t{1} << 20;
  // On EOF: how long in-flight calls and tasks may finish normally, then how long they get after
  // being cancelled (tasks: failed, saying the server exited). Together they stay under the 2 s
  // exit promise.
  std::chrono::milliseconds finish_grace{1200};
  std::chrono::milliseconds cancel_grace{500};
  // A drain (SIGTERM/SIGINT; server/app/serve.cpp): another thread requests a stop of `drain`.
  // Reading stops as at EOF (the reader waits on the input and on an eventfd the stop writes),
  // and running calls and tasks get stop_grace (not finish_grace) to finish — also when the
  // drain is asked while they already had the EOF grace.
  std::stop_token drain;
  std::chrono::milliseconds stop_grace{0};
  // Called once on the reading thread, after the first input was handled (the first message
  // answered, when it is answered inline) or after `settle_after` without input, whichever comes
  // first (not at all when the input ends before): what the caller starts then (its signal
  // watch, its housekeeping threads) does not delay the first answer. The one wait with a
  // timeout on that thread; the reader waits without one afterwards.
  std::function<void()> on_settled;
  std::chrono::milliseconds settle_after{50};
};

class StdioTransport final : public MessageSink {
 public:
  StdioTransport(McpServer& server, StdioOptions options);

  // Serves one client until EOF on in_fd. Returns true when no call was left running; false when
  // some ignored cancellation past the grace periods (the process should then exit without
  // waiting for them, e.g. std::_Exit).
  bool Run();

  // MessageSink: writes one message as one line. Thread-safe.
  void Send(OutgoingMessage message) override;

 private:
  void WriteLine(std::string_view text);
  // Reads the input into `splitter` until EOF, an error, or the drain. One read() at a time.
  void ReadUntilEnd(class LineSplitter& splitter);
  bool WaitForCallsAndTasks(Connection& connection);

  McpServer& server_;
  const StdioOptions options_;
  Mutex write_mu_;                             // guards writes to options_.out_fd and broken_
  bool broken_ GUARDED_BY(write_mu_) = false;  // the output is gone (EPIPE): drop further messages
};

}  // namespace imgmcp::mcp
