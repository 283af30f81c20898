// StdioTransport over real pipes: framing, the oversize refusal and EOF shutdown.
#include "mcp/stdio_transport.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "common/cancellation.h"
#include "mcp/server.h"

namespace imgmcp::mcp {
namespace {

using std::chrono::milliseconds;

class StdioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::pipe(in_), 0);
    ASSERT_EQ(::pipe(out_), 0);
    ToolDefinition block;
    block.name = "block";
    block.description = "runs until cancelled";
    block.input_schema = {{"type", "object"}};
    ASSERT_TRUE(server_
                    .RegisterTool(block,
                                  [](const Json&, ToolCallContext& ctx) {
                                    SleepUnlessStopped(std::chrono::hours(1), ctx.Cancellation());
                                    return ToolResult::Text("stopped");
                                  })
                    .ok());
  }
  void TearDown() override {
    CloseInput();
    if (run_.valid()) run_.wait();
    ::close(out_[0]);
    ::close(out_[1]);
  }

  void Start(size_t max_bytes) {
    StdioOptions options;
    options.in_fd = in_[0];
    options.out_fd = out_[1];
    options.max_message_bytes = max_bytes;
    options.read_chunk_bytes = 7;  // tiny reads: messages always span several
    options.finish_grace = milliseconds(200);
    transport_ = std::make_unique<StdioTransport>(server_, options);
    run_ = std::async(std::launch::async, [this] {
      bool clean = transport_->Run();
      ::close(in_[0]);
      return clean;
    });
  }

  void Write(const std::string& data) {
    ASSERT_EQ(::write(in_[1], data.data(), data.size()), static_cast<ssize_t>(data.size()));
  }
  void CloseInput() {
    if (in_[1] >= 0) ::close(in_[1]);
    in_[1] = -1;
  }

  // The next stdout line, parsed (null Json on timeout).
  Json ReadLine() {
    while (true) {
      auto nl = buffered_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffered_.substr(0, nl);
        buffered_.erase(0, nl + 1);
        return Json::parse(line);
      }
      pollfd pfd{out_[0], POLLIN, 0};
      if (::poll(&pfd, 1, 10000) <= 0) return Json();
      char buf[4096];
      ssize_t n = ::read(out_[0], buf, sizeof(buf));
      if (n <= 0) return Json();
      buffered_.append(buf, static_cast<size_t>(n));
    }
  }

  McpServer server_{ServerOptions{}};
  int in_[2] = {-1, -1};
  int out_[2] = {-1, -1};
  std::string buffered_;
  std::unique_ptr<StdioTransport> transport_;
  std::future<bool> run_;
};

TEST_F(StdioTest, AnswersSplitMessagesOneCompactLineEach) {
  Start(1 << 20);
  Write("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":");
  Write(
      "\"2025-06-18\",\"capabilities\":{}}}\r\n\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}"
      "\n");
  Json init = ReadLine();
  EXPECT_EQ(init["id"], 1);
  EXPECT_EQ(init["result"]["protocolVersion"], "2025-06-18");
  Json ping = ReadLine();
  EXPECT_EQ(ping["id"], 2);
  EXPECT_EQ(ping["result"], Json::object());
  CloseInput();
  EXPECT_TRUE(run_.get());
}

TEST_F(StdioTest, RefusesAnOversizeLineAndKeepsGoing) {
  Start(256);
  Write("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"pad\":\"" +
        std::string(1000, 'x') + "\"}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
  Json refused = ReadLine();
  EXPECT_EQ(refused["error"]["code"], -32600);
  EXPECT_TRUE(refused["id"].is_null());
  Json ping = ReadLine();
  EXPECT_EQ(ping["id"], 2);
  EXPECT_TRUE(ping.contains("result"));
}

TEST_F(StdioTest, EofCancelsRunningCallsAndReturnsPromptly) {
  Start(1 << 20);
  Write(
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
      "\"2025-11-25\"}}\n");
  ASSERT_EQ(ReadLine()["id"], 1);
  Write(
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"block\"}}\n");
  const auto start = std::chrono::steady_clock::now();
  CloseInput();
  ASSERT_EQ(run_.wait_for(std::chrono::seconds(2)), std::future_status::ready);
  EXPECT_TRUE(run_.get());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

}  // namespace
}  // namespace imgmcp::mcp
