// HttpSession's routing against the real protocol core and the conformance fixtures: which
// messages become a JSON answer, which an SSE stream, and what a resuming client gets back.
#include "server/http/http_session.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "mcp/server.h"
#include "server/conformance/conformance_fixtures.h"

namespace imgmcp::http {
namespace {

using std::chrono::milliseconds;

struct Frame {
  std::string id;
  std::string data;
  bool has_retry = false;
};

// Everything the channel carries until it ends (bounded: fails the test after 10 s).
std::vector<Frame> ReadAll(SseChannel& channel) {
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    std::string chunk;
    auto r = channel.Pull(&chunk, milliseconds(100));
    if (r == SseChannel::PullResult::kData) text += chunk;
    if (r == SseChannel::PullResult::kEnd || r == SseChannel::PullResult::kAborted) break;
  }
  std::vector<Frame> frames;
  size_t pos = 0;
  while (true) {
    size_t end = text.find("\n\n", pos);
    if (end == std::string::npos) break;
    std::string block = text.substr(pos, end - pos);
    pos = end + 2;
    Frame f;
    size_t line_start = 0;
    while (line_start <= block.size()) {
      size_t nl = block.find('\n', line_start);
      std::string line = block.substr(line_start, nl - line_start);
      if (line.rfind("id: ", 0) == 0) f.id = line.substr(4);
      if (line.rfind("data: ", 0) == 0) f.data = line.substr(6);
      if (line.rfind("retry: ", 0) == 0) f.has_retry = true;
      if (nl == std::string::npos) break;
      line_start = nl + 1;
    }
    frames.push_back(f);
  }
  return frames;
}

class HttpSessionTest : public ::testing::Test {
 protected:
  HttpSessionTest() : server_(mcp::ServerOptions{}) {
    EXPECT_TRUE(conformance::RegisterConformanceFixtures(server_).ok());
    session_ = std::make_shared<HttpSession>("test-session", SessionOptions{});
    session_->Attach(server_.Connect(*session_));
    auto init = Call(Json{{"jsonrpc", "2.0"},
                          {"id", 0},
                          {"method", "initialize"},
                          {"params",
                           {{"protocolVersion", "2025-11-25"},
                            {"capabilities", {{"sampling", Json::object()}}},
                            {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}});
    EXPECT_TRUE(init.json.has_value());
  }
  ~HttpSessionTest() override { session_->End(); }

  // `stream_after`: see HttpSession::AwaitAnswer (nullopt waits for the first message).
  HttpSession::Answer Call(Json request,
                           std::optional<std::chrono::milliseconds> stream_after = std::nullopt) {
    auto exchange = session_->BeginExchange({request["id"]}, false);
    EXPECT_NE(exchange, nullptr);
    session_->connection().HandleJson(std::move(request));
    return session_->AwaitAnswer(exchange, stream_after);
  }

  static Json ToolCall(int id, const std::string& name, Json meta = nullptr) {
    Json params = {{"name", name}, {"arguments", Json::object()}};
    if (!meta.is_null()) params["_meta"] = meta;
    return Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", params}};
  }

  mcp::McpServer server_;
  std::shared_ptr<HttpSession> session_;
};

TEST_F(HttpSessionTest, ALoneAnswerIsJson) {
  auto answer = Call(Json{{"jsonrpc", "2.0"}, {"id", "p"}, {"method", "ping"}});
  ASSERT_TRUE(answer.json.has_value());
  EXPECT_EQ(Json::parse(*answer.json)["id"], "p");
  answer = Call(ToolCall(2, "test_simple_text"));
  ASSERT_TRUE(answer.json.has_value());
  EXPECT_NE(answer.json->find("simple text response"), std::string::npos);
  // A quick tool call is JSON too when the transport bounds the wait (as it does for tools/call).
  answer = Call(ToolCall(5, "test_simple_text"), std::chrono::seconds(10));
  ASSERT_TRUE(answer.json.has_value());
  EXPECT_NE(answer.json->find("simple text response"), std::string::npos);
}

// A request with nothing to say yet is answered as a stream once the bounded wait is over, so
// the client gets the priming event (where to resume) without waiting for the whole call.
TEST_F(HttpSessionTest, ASilentRequestGetsAStreamAfterTheBoundedWait) {
  auto exchange = session_->BeginExchange({Json(89)}, false);  // never sent: stays silent
  ASSERT_NE(exchange, nullptr);
  auto answer = session_->AwaitAnswer(exchange, std::chrono::milliseconds(30));
  ASSERT_FALSE(answer.json.has_value());
  ASSERT_NE(answer.sse, nullptr);
  std::string first;
  ASSERT_EQ(answer.sse->Pull(&first, std::chrono::seconds(5)), SseChannel::PullResult::kData);
  EXPECT_NE(first.find("retry:"), std::string::npos);  // the priming event
}

TEST_F(HttpSessionTest, ProgressFirstMeansSseWithPrimingEventThenReplay) {
  auto answer = Call(ToolCall(3, "test_tool_with_progress", {{"progressToken", "tok"}}));
  ASSERT_FALSE(answer.json.has_value());
  ASSERT_NE(answer.sse, nullptr);
  auto frames = ReadAll(*answer.sse);
  ASSERT_GE(frames.size(), 5u);  // priming, 3 × progress, response
  EXPECT_TRUE(frames[0].has_retry);
  EXPECT_TRUE(frames[0].data.empty());
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(Json::parse(frames[i].data)["method"], "notifications/progress");
  }
  Json last = Json::parse(frames.back().data);
  EXPECT_EQ(last["id"], 3);
  EXPECT_EQ(last["result"]["content"][0]["text"], "tok");

  // A client that lost the stream right after the priming event gets all of it again.
  auto primed = ParseEventId(frames[0].id);
  ASSERT_TRUE(primed.has_value());
  auto resumed = session_->Resume(*primed);
  ASSERT_NE(resumed, nullptr);
  auto replay = ReadAll(*resumed);
  ASSERT_EQ(replay.size(), frames.size() - 1);
  EXPECT_EQ(replay.back().id, frames.back().id);
  // And after the second progress event, only the rest.
  auto after = session_->Resume(*ParseEventId(frames[2].id));
  EXPECT_EQ(ReadAll(*after).size(), frames.size() - 3);
}

TEST_F(HttpSessionTest, ClosedOrDroppedStreamResumesWithoutCancellingTheCall) {
  auto answer = Call(ToolCall(4, "test_tool_with_progress", {{"progressToken", 9}}),
                     std::chrono::milliseconds(0));
  ASSERT_NE(answer.sse, nullptr);
  session_->CloseRequestStream(4);  // the server ends the stream mid-call (SEP-1699)
  auto before = ReadAll(*answer.sse);
  ASSERT_FALSE(before.empty());
  for (const Frame& f : before) EXPECT_EQ(f.data.find("\"result\""), std::string::npos);
  session_->Detach(answer.sse);  // the client is gone too; the call goes on
  auto resumed = session_->Resume(*ParseEventId(before.back().id));
  auto rest = ReadAll(*resumed);
  ASSERT_FALSE(rest.empty());
  EXPECT_EQ(before.size() + rest.size(), 5u);  // priming, 3 × progress, response
  Json last = Json::parse(rest.back().data);
  EXPECT_EQ(last["id"], 4);
  EXPECT_EQ(last["result"]["content"][0]["text"], "9");
}

TEST_F(HttpSessionTest, UnrelatedMessagesGoToTheStandaloneStream) {
  auto stream = session_->OpenStandaloneStream();
  ASSERT_NE(stream, nullptr);
  auto sub = Call(Json{{"jsonrpc", "2.0"},
                       {"id", 5},
                       {"method", "resources/subscribe"},
                       {"params", {{"uri", "test://watched-resource"}}}});
  ASSERT_TRUE(sub.json.has_value());
  server_.resource_notifier().ResourceUpdated("test://watched-resource");
  session_->End();  // ends the stream after what is queued
  auto frames = ReadAll(*stream);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_TRUE(frames[0].has_retry);
  Json note = Json::parse(frames[1].data);
  EXPECT_EQ(note["method"], "notifications/resources/updated");
  EXPECT_EQ(note["params"]["uri"], "test://watched-resource");
}

TEST_F(HttpSessionTest, SamplingRequestGoesOnThePostStreamAndTheAnswerCompletesIt) {
  Json call = ToolCall(6, "test_sampling");
  call["params"]["arguments"] = {{"prompt", "hi"}};
  auto answer = Call(call);
  ASSERT_NE(answer.sse, nullptr);
  std::string text;
  Json request;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (request.is_null() && std::chrono::steady_clock::now() < deadline) {
    std::string chunk;
    if (answer.sse->Pull(&chunk, milliseconds(100)) == SseChannel::PullResult::kData) {
      text += chunk;
    }
    size_t at = text.find("\"sampling/createMessage\"");
    if (at == std::string::npos) continue;
    size_t start = text.rfind("data: ", at) + 6;
    request = Json::parse(text.substr(start, text.find('\n', start) - start));
  }
  ASSERT_EQ(request["method"], "sampling/createMessage");
  session_->connection().HandleJson(Json{{"jsonrpc", "2.0"},
                                         {"id", request["id"]},
                                         {"result",
                                          {{"role", "assistant"},
                                           {"content", {{"type", "text"}, {"text", "hello"}}},
                                           {"model", "m"}}}});
  auto frames = ReadAll(*answer.sse);
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(Json::parse(frames.back().data)["result"]["content"][0]["text"], "LLM response: hello");
}

TEST_F(HttpSessionTest, DuplicateIdsInProgressAreRefused) {
  auto first = session_->BeginExchange({Json(77)}, false);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(session_->BeginExchange({Json(77)}, false), nullptr);
  EXPECT_NE(session_->BeginExchange({Json("77")}, false), nullptr);  // "77" is another id
}

TEST_F(HttpSessionTest, ARefusedBatchNamesTheIdInProgress) {
  ASSERT_NE(session_->BeginExchange({Json("b")}, false), nullptr);
  Json duplicate;
  EXPECT_EQ(session_->BeginExchange({Json("a"), Json("b"), Json("c")}, true, &duplicate), nullptr);
  EXPECT_EQ(duplicate, Json("b"));
  EXPECT_EQ(mcp::DuplicateRequestIdError(duplicate).message,
            "Invalid Request: duplicate request id \"b\" is still in progress");
  // Nothing of the refused batch was registered: its other ids are still free.
  EXPECT_NE(session_->BeginExchange({Json("a")}, false), nullptr);
}

TEST_F(HttpSessionTest, ABatchWithOneIdTwiceIsRefused) {
  Json duplicate;
  EXPECT_EQ(session_->BeginExchange({Json(7), Json("x"), Json(7)}, true, &duplicate), nullptr);
  EXPECT_EQ(duplicate, Json(7));
  // Nothing was registered; the same ids in separate requests are fine.
  EXPECT_NE(session_->BeginExchange({Json(7)}, false), nullptr);
  EXPECT_NE(session_->BeginExchange({Json("x")}, false), nullptr);
}

TEST_F(HttpSessionTest, EndWakesAWaitingPost) {
  auto exchange = session_->BeginExchange({Json(88)}, false);
  auto waiting =
      std::async(std::launch::async, [&] { return session_->AwaitAnswer(exchange, std::nullopt); });
  EXPECT_TRUE(session_->Busy());
  session_->End();
  EXPECT_TRUE(waiting.get().session_closed);
  EXPECT_FALSE(session_->Busy());
  EXPECT_EQ(session_->OpenStandaloneStream(), nullptr);
}

// A modern request's session watches its client's socket: a client that hangs up while the answer
// is awaited ends the wait at once (the transport then cancels the request).
TEST_F(HttpSessionTest, AWatchedClientHangingUpEndsTheWaitForTheAnswer) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  auto request = std::make_shared<HttpSession>(
      "", SessionOptions{false, milliseconds(10), 0, 0, /*watch_socket=*/fds[0]});
  request->Attach(server_.Connect(*request, mcp::ConnectionMode::kModernOnly));
  auto exchange = request->BeginExchange({Json(7)}, false);  // never sent: stays silent
  auto waiting =
      std::async(std::launch::async, [&] { return request->AwaitAnswer(exchange, std::nullopt); });
  ::close(fds[1]);
  const HttpSession::Answer answer = waiting.get();
  EXPECT_TRUE(answer.client_gone);
  EXPECT_FALSE(answer.json.has_value());
  request->End();
  ::close(fds[0]);
}

TEST_F(HttpSessionTest, ReplayBufferIsBounded) {
  auto small =
      std::make_shared<HttpSession>("small", SessionOptions{true, milliseconds(10), 3, 1 << 20});
  small->Attach(server_.Connect(*small));
  auto stream = small->OpenStandaloneStream();
  for (int i = 0; i < 10; ++i) {
    mcp::OutgoingMessage message;
    message.json = Json{{"n", i}}.dump();
    small->Send(std::move(message));
  }
  auto replay = small->Resume(EventId{0, 0});
  small->End();
  auto frames = ReadAll(*replay);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(Json::parse(frames[0].data)["n"], 7);
}

}  // namespace
}  // namespace imgmcp::http
