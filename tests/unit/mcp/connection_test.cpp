// The protocol core driven in memory: McpServer + Connection + MemorySink.
#include "mcp/connection.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/base64.h"
#include "common/cancellation.h"
#include "mcp/json_rpc.h"
#include "mcp/memory_sink.h"
#include "mcp/server.h"
#include "tests/unit/mcp/tool_def.h"

namespace imgmcp::mcp {
namespace {

using std::chrono::milliseconds;

// Lets a test wait until a tool is running.
class Signal {
 public:
  void Notify() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++count_;
    }
    cv_.notify_all();
  }
  bool WaitFor(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kWait, [&] { return count_ >= n; });
  }

 private:
  std::mutex mu_;  // guards count_
  std::condition_variable cv_;
  int count_ = 0;
};

// A provider serving `uris`, one resource per page.
class FakeProvider : public ResourceProvider {
 public:
  FakeProvider(std::string scheme, std::vector<std::string> names)
      : scheme_(std::move(scheme)), names_(std::move(names)) {}
  Result<ResourcePage> List(const Caller&, const std::optional<std::string>& cursor) override {
    size_t i = 0;
    if (cursor) {
      if (cursor->empty() || cursor->find_first_not_of("0123456789") != std::string::npos) {
        return MakeError(ErrorCode::kInvalidArgument, "bad cursor");
      }
      i = std::stoul(*cursor);
    }
    ResourcePage page;
    if (i < names_.size()) {
      page.resources.push_back({{"uri", scheme_ + names_[i]}, {"name", names_[i]}});
    }
    if (i + 1 < names_.size()) page.next_cursor = std::to_string(i + 1);
    return page;
  }
  Json Templates() override {
    return Json::array({{{"uriTemplate", scheme_ + "{name}"}, {"name", scheme_}}});
  }
  bool Handles(const std::string& uri) const override { return uri.rfind(scheme_, 0) == 0; }
  // A caller of one session ("only_session": a gallery link's) reaches that name alone.
  bool Reaches(const Caller& caller, const std::string& uri) const override {
    return caller.only_session.empty() || uri == scheme_ + caller.only_session;
  }
  Result<Json> Read(const Caller&, const std::string& uri) override {
    for (const auto& n : names_) {
      if (uri == scheme_ + n) {
        return Json{{"contents", {{{"uri", uri}, {"mimeType", "text/plain"}, {"text", n}}}}};
      }
    }
    return MakeError(ErrorCode::kNotFound, "no " + uri);
  }

 private:
  std::string scheme_;
  std::vector<std::string> names_;
};

class CoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Build(ServerOptions{}); }

  void Build(ServerOptions options) {
    if (connection_) connection_->Close();
    connection_.reset();
    server_.reset();
    sink_ = std::make_unique<MemorySink>();
    server_ = std::make_unique<McpServer>(options);
    RegisterTools();
    server_->AddResourceProvider(
        std::make_shared<FakeProvider>("a://", std::vector<std::string>{"1", "2"}));
    server_->AddResourceProvider(
        std::make_shared<FakeProvider>("b://", std::vector<std::string>{"3"}));
    connection_ = server_->Connect(*sink_);
  }

  void TearDown() override {
    connection_->Close();
    connection_.reset();
    server_.reset();
  }

  void RegisterTools() {
    ASSERT_TRUE(server_
                    ->RegisterTool(Def("echo"),
                                   [](const Json& args, ToolCallContext&) {
                                     return ToolResult::Text(args.dump());
                                   })
                    .ok());
    ASSERT_TRUE(server_
                    ->RegisterTool(Def("fail"),
                                   [](const Json&, ToolCallContext&) {
                                     return ToolResult::ErrorText("it failed");
                                   })
                    .ok());
    ASSERT_TRUE(server_
                    ->RegisterTool(Def("thrower"),
                                   [](const Json&, ToolCallContext&) -> ToolResult {
                                     throw std::runtime_error("boom");
                                   })
                    .ok());
    // Runs until cancelled (the tool's own polling, as a real backend would check its token).
    ASSERT_TRUE(server_
                    ->RegisterTool(Def("block"),
                                   [this](const Json&, ToolCallContext& ctx) {
                                     started_.Notify();
                                     SleepUnlessStopped(std::chrono::hours(1), ctx.Cancellation());
                                     return ToolResult::Text("cancelled");
                                   })
                    .ok());
    ASSERT_TRUE(
        server_
            ->RegisterTool(Def("progress"),
                           [](const Json&, ToolCallContext& ctx) {
                             ctx.ReportProgress(10, 100, "ten");
                             ctx.ReportProgress(5, 100, "");  // not increasing: raised above 10
                             ctx.ReportProgress(20, std::nullopt, "");
                             return ToolResult::Text(ctx.HasProgressToken() ? "token" : "no token");
                           })
            .ok());
    ASSERT_TRUE(server_
                    ->RegisterTool(Def("logs"),
                                   [](const Json&, ToolCallContext& ctx) {
                                     ctx.Log(LogLevel::kDebug, "t", "debug line");
                                     ctx.Log(LogLevel::kInfo, "t", "info line");
                                     ctx.Log(LogLevel::kError, "", Json{{"k", 1}});
                                     return ToolResult::Text("logged");
                                   })
                    .ok());
    ASSERT_TRUE(
        server_
            ->RegisterTool(
                Def("ask"),
                [](const Json&, ToolCallContext& ctx) {
                  auto answer = ctx.SendRequest("sampling/createMessage", {{"maxTokens", 1}});
                  if (!answer.ok()) return ToolResult::ErrorText(answer.error().message);
                  return ToolResult::Text(answer->dump());
                })
            .ok());
  }

  Json Send(const Json& message) {
    connection_->HandleJson(message);
    return message;
  }

  // Sends a request and returns its response.
  Json Call(const std::string& method, Json params = Json::object()) {
    const Json id = next_id_++;
    connection_->HandleJson(MakeRequest(id, method, std::move(params)));
    auto response = sink_->WaitForResponse(id, kWait);
    EXPECT_TRUE(response.has_value()) << "no response to " << method;
    return response.value_or(Json());
  }

  Json Init(const std::string& version = "2025-11-25", Json capabilities = Json::object()) {
    Json r = Call("initialize", {{"protocolVersion", version},
                                 {"capabilities", std::move(capabilities)},
                                 {"clientInfo", {{"name", "unit"}, {"version", "0"}}}});
    connection_->HandleJson(MakeNotification("notifications/initialized", Json::object()));
    return r;
  }

  static int ErrorCode(const Json& response) {
    if (!response.contains("error") || !response["error"].contains("code")) return 0;
    return response["error"]["code"].get<int>();
  }

  std::vector<Json> SentWithMethod(const std::string& method) {
    std::vector<Json> out;
    for (const auto& s : sink_->Messages()) {
      if (s.message.is_object() && s.message.value("method", "") == method)
        out.push_back(s.message);
    }
    return out;
  }

  std::unique_ptr<MemorySink> sink_;
  std::unique_ptr<McpServer> server_;
  std::shared_ptr<Connection> connection_;
  Signal started_;
  int next_id_ = 1;
};

// --- lifecycle ----------------------------------------------------------------------------------

// Claude Code's stdio probe is a modern server/discover; it answers, and an initialize on the same
// pipe still opens a legacy session (2026-07-28 basic/versioning, dual-era servers).
TEST_F(CoreTest, DiscoverProbeIsAnsweredThenInitializeOpensALegacySession) {
  Json probe =
      Call("server/discover", {{"_meta",
                                {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                                 {"io.modelcontextprotocol/clientCapabilities", Json::object()}}}});
  EXPECT_EQ(probe["result"]["supportedVersions"],
            Json({"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}));
  // A modern claim without clientCapabilities is invalid params.
  Json partial = Call("server/discover",
                      {{"_meta", {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"}}}});
  EXPECT_EQ(ErrorCode(partial), rpc_error::kInvalidParams);
  // Without _meta it is a legacy request, and the legacy era has no server/discover.
  EXPECT_EQ(ErrorCode(Call("server/discover")), rpc_error::kMethodNotFound);
  EXPECT_FALSE(connection_->initialized());
  EXPECT_EQ(Call("ping")["result"], Json::object());  // ping is fine before initialize
  EXPECT_EQ(ErrorCode(Call("tools/list")), rpc_error::kInvalidRequest);  // known, too early
  Json init = Init();
  EXPECT_EQ(init["result"]["protocolVersion"], "2025-11-25");
  EXPECT_EQ(init["result"]["serverInfo"]["name"], "imgmcp");
  const Json& caps = init["result"]["capabilities"];
  EXPECT_EQ(caps["tools"], (Json{{"listChanged", false}}));
  EXPECT_EQ(caps["resources"], (Json{{"subscribe", true}, {"listChanged", true}}));
  EXPECT_EQ(caps["logging"], Json::object());
  EXPECT_FALSE(caps.contains("prompts"));  // none registered
  EXPECT_FALSE(caps.contains("completions"));
  EXPECT_TRUE(connection_->initialized());
  EXPECT_TRUE(Call("tools/list").contains("result"));
}

TEST_F(CoreTest, NegotiatesEachSupportedVersionAndAnswersUnknownWithLatest) {
  for (std::string v : {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "1999-01-01"}) {
    Build(ServerOptions{});
    Json init = Init(v);
    const bool supported = v != "2024-11-05" && v != "1999-01-01";
    EXPECT_EQ(init["result"]["protocolVersion"], supported ? v : "2025-11-25") << v;
    EXPECT_EQ(connection_->protocol_version(), supported ? v : "2025-11-25");
  }
}

TEST_F(CoreTest, InitializeNeedsAVersionAndHappensOnce) {
  EXPECT_EQ(ErrorCode(Call("initialize", {{"capabilities", Json::object()}})),
            rpc_error::kInvalidParams);
  Init();
  EXPECT_EQ(ErrorCode(Call("initialize", {{"protocolVersion", "2025-11-25"}})),
            rpc_error::kInvalidRequest);
}

// --- JSON-RPC classification
// ----------------------------------------------------------------------

TEST_F(CoreTest, ParseErrorsAndInvalidRequestsHaveTheRightCodesAndIds) {
  connection_->HandleMessage("{not json");
  auto parse = sink_->WaitFor([](const Json& m) { return m.contains("error"); }, kWait);
  ASSERT_TRUE(parse);
  EXPECT_EQ((*parse)["error"]["code"], rpc_error::kParseError);
  EXPECT_TRUE((*parse)["id"].is_null());

  struct Case {
    Json message;
    int code;
    Json id;
  };
  const Case cases[] = {
      {Json(42), rpc_error::kInvalidRequest, nullptr},
      {Json{{"jsonrpc", "2.0"}, {"id", 7}}, rpc_error::kInvalidRequest, 7},
      {Json{{"jsonrpc", "1.0"}, {"id", 8}, {"method", "ping"}}, rpc_error::kInvalidRequest, 8},
      {Json{{"id", 9}, {"method", "ping"}}, rpc_error::kInvalidRequest, 9},
      {Json{{"jsonrpc", "2.0"}, {"id", 10}, {"method", 5}}, rpc_error::kInvalidRequest, 10},
      {Json{{"jsonrpc", "2.0"}, {"id", nullptr}, {"method", "ping"}}, rpc_error::kInvalidRequest,
       nullptr},
      {Json{{"jsonrpc", "2.0"}, {"id", 1.5}, {"method", "ping"}}, rpc_error::kInvalidRequest,
       nullptr},
      {Json{{"jsonrpc", "2.0"}, {"id", "s"}, {"method", "ping"}, {"params", {1, 2}}},
       rpc_error::kInvalidParams, "s"},
      {Json{{"jsonrpc", "2.0"}, {"id", "u"}, {"method", "no/such"}}, rpc_error::kMethodNotFound,
       "u"},
  };
  for (const Case& c : cases) {
    const size_t before = sink_->Messages().size();
    connection_->HandleJson(c.message);
    auto messages = sink_->Messages();
    ASSERT_EQ(messages.size(), before + 1) << c.message.dump();
    const Json& reply = messages.back().message;
    EXPECT_EQ(reply["error"]["code"], c.code) << c.message.dump();
    EXPECT_EQ(reply["id"], c.id) << c.message.dump();
    EXPECT_EQ(reply["jsonrpc"], "2.0");
  }
}

// A raw NUL byte is never valid JSON text; nlohmann's parser would stop at it and accept the
// prefix, silently dropping whatever followed. Found by fuzz_mcp_message.
TEST_F(CoreTest, RawNulByteIsAParseErrorNotATruncatedMessage) {
  Init();
  const size_t before = sink_->Messages().size();
  connection_->HandleMessage(
      std::string_view("{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"ping\"}\0{[[", 46));
  // Parse errors are answered on the calling thread, and a ping would be too.
  auto messages = sink_->Messages();
  ASSERT_EQ(messages.size(), before + 1);
  const Json& reply = messages.back().message;
  EXPECT_EQ(reply["error"]["code"], rpc_error::kParseError);
  EXPECT_TRUE(reply["id"].is_null());
  // The depth scan agrees with the parser about where the text ends.
  EXPECT_FALSE(TextNestsDeeperThan(std::string_view("{}\0[[[[", 7), 1));
}

// A quick tool call runs on the thread that delivered it only when the transport's caller blocks
// for the answer anyway (an HTTP POST); with a transport that keeps reading (stdio) it runs on a
// worker like every other call, and a tool that is not quick always does.
TEST(QuickToolCallsTest, RunOnTheCallersThreadOnlyWhenTheCallerAwaitsTheAnswer) {
  for (bool awaits : {false, true}) {
    SCOPED_TRACE(awaits ? "caller awaits answers" : "caller keeps reading");
    McpServer server{ServerOptions{}};
    std::mutex mu;
    std::map<std::string, std::thread::id> ran_on;  // guarded by mu
    for (bool quick : {false, true}) {
      ToolDefinition d = Def(quick ? "quick" : "plain");
      d.quick = quick;
      ASSERT_TRUE(server
                      .RegisterTool(d,
                                    [&, name = d.name](const Json&, ToolCallContext&) {
                                      std::lock_guard<std::mutex> lock(mu);
                                      ran_on[name] = std::this_thread::get_id();
                                      return ToolResult::Text("ok");
                                    })
                      .ok());
    }
    MemorySink sink(awaits);
    auto connection = server.Connect(sink);
    connection->HandleMessage(
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
        R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
    connection->HandleMessage(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    connection->HandleMessage(
        R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"quick"}})");
    if (awaits) {  // answered before HandleMessage returned
      bool answered = false;
      for (const auto& sent : sink.Messages()) answered |= sent.message.value("id", Json()) == 1;
      EXPECT_TRUE(answered);
    }
    connection->HandleMessage(
        R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"plain"}})");
    ASSERT_TRUE(connection->WaitIdle(std::chrono::seconds(10)));
    ASSERT_TRUE(sink.WaitForResponse(1, std::chrono::seconds(5)).has_value());
    ASSERT_TRUE(sink.WaitForResponse(2, std::chrono::seconds(5)).has_value());
    {
      std::lock_guard<std::mutex> lock(mu);
      EXPECT_EQ(ran_on["quick"] == std::this_thread::get_id(), awaits);
      EXPECT_NE(ran_on["plain"], std::this_thread::get_id());
    }
    connection->Close();
  }
}

TEST_F(CoreTest, NotificationsAndStrayResponsesAreNeverAnswered) {
  Init();
  const size_t before = sink_->Messages().size();
  Send({{"jsonrpc", "2.0"}, {"method", "notifications/whatever"}});
  Send({{"jsonrpc", "2.0"}, {"method", "tools/list"}});  // a "request" without id: a notification
  Send(
      {{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 99}}}});
  Send({{"jsonrpc", "2.0"}, {"id", 12345}, {"result", Json::object()}});
  EXPECT_EQ(Call("ping")["result"], Json::object());
  EXPECT_EQ(sink_->Messages().size(), before + 1);  // only the ping's answer
}

TEST_F(CoreTest, IdsKeepTheirType) {
  Init();
  connection_->HandleJson(MakeRequest("abc", "ping", Json::object()));
  connection_->HandleJson(MakeRequest(0, "ping", Json::object()));
  auto s = sink_->WaitForResponse("abc", kWait);
  auto n = sink_->WaitForResponse(0, kWait);
  ASSERT_TRUE(s && n);
  EXPECT_TRUE((*s)["id"].is_string());
  EXPECT_TRUE((*n)["id"].is_number_integer());
}

// --- batches -------------------------------------------------------------------------------------

TEST_F(CoreTest, BatchesOnlyUnder20250326) {
  Init("2025-11-25");
  connection_->HandleJson(Json::array({MakeRequest(1, "ping", Json::object())}));
  auto refused =
      sink_->WaitFor([](const Json& m) { return m.is_object() && m.contains("error"); }, kWait);
  ASSERT_TRUE(refused);
  EXPECT_EQ((*refused)["error"]["code"], rpc_error::kInvalidRequest);
  EXPECT_TRUE((*refused)["id"].is_null());
}

TEST_F(CoreTest, BatchUnder20250326IsAnsweredWithOneArray) {
  Init("2025-03-26");
  connection_->HandleJson(
      Json::array({MakeRequest("p", "ping", Json::object()),
                   MakeNotification("notifications/initialized", Json::object()),
                   MakeRequest("t", "tools/call", {{"name", "echo"}, {"arguments", {{"x", 1}}}}),
                   MakeRequest("u", "nope", Json::object()), Json(3)}));
  auto answer = sink_->WaitFor([](const Json& m) { return m.is_array(); }, kWait);
  ASSERT_TRUE(answer);
  ASSERT_EQ(answer->size(), 4u);  // ping, tools/call, unknown method, invalid element
  std::map<std::string, Json> by_id;
  for (const Json& r : *answer) by_id[r["id"].dump()] = r;
  EXPECT_EQ(by_id["\"p\""]["result"], Json::object());
  EXPECT_EQ(by_id["\"t\""]["result"]["content"][0]["text"], "{\"x\":1}");
  EXPECT_EQ(by_id["\"u\""]["error"]["code"], rpc_error::kMethodNotFound);
  EXPECT_EQ(by_id["null"]["error"]["code"], rpc_error::kInvalidRequest);
  // The batch answer is related to its first request, so an HTTP transport can route it.
  for (const auto& s : sink_->Messages()) {
    if (s.message.is_array()) {
      EXPECT_EQ(s.related_request_id, Json("p"));
    }
  }
  // An empty batch is an invalid request.
  connection_->HandleJson(Json::array());
  EXPECT_TRUE(sink_->WaitFor(
      [](const Json& m) {
        return m.is_object() && m.contains("error") &&
               m["error"]["message"].get<std::string>().find("empty batch") != std::string::npos;
      },
      kWait));
}

// --- tools
// ------------------------------------------------------------------------------------------

TEST_F(CoreTest, ToolsCallDispatchAndErrors) {
  Init();
  Json ok = Call("tools/call", {{"name", "echo"}, {"arguments", {{"a", "b"}}}});
  EXPECT_EQ(ok["result"]["content"][0]["text"], "{\"a\":\"b\"}");
  EXPECT_EQ(ok["result"]["isError"], false);
  EXPECT_EQ(Call("tools/call", {{"name", "echo"}})["result"]["content"][0]["text"], "{}");

  Json unknown = Call("tools/call", {{"name", "nope"}, {"arguments", Json::object()}});
  EXPECT_EQ(ErrorCode(unknown), rpc_error::kInvalidParams);
  EXPECT_EQ(unknown["error"]["message"], "Unknown tool: nope");
  EXPECT_EQ(ErrorCode(Call("tools/call", {{"name", "echo"}, {"arguments", {1, 2}}})),
            rpc_error::kInvalidParams);
  EXPECT_EQ(ErrorCode(Call("tools/call", {{"arguments", Json::object()}})),
            rpc_error::kInvalidParams);

  Json failed = Call("tools/call", {{"name", "fail"}});
  EXPECT_EQ(failed["result"]["isError"], true);
  EXPECT_EQ(failed["result"]["content"][0]["text"], "it failed");
  Json thrown = Call("tools/call", {{"name", "thrower"}});
  EXPECT_EQ(thrown["result"]["isError"], true);
  EXPECT_NE(thrown["result"]["content"][0]["text"].get<std::string>().find("boom"),
            std::string::npos);
}

// Refuses every call of principal "busy"; counts the permits it gave that are still held.
class RefusingLimiter final : public CallLimiter {
 public:
  CallPermit Admit(const Caller& caller, const std::string& tool) override {
    CallPermit permit;
    if (caller.principal == "busy") {
      permit.refusal = CallRefusal{"--rate-limit-per-user", "slow down (" + tool + ")", 7};
      return permit;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      held_ += 1;
    }
    permit.held = std::shared_ptr<void>(new int(0), [this](void* p) {
      delete static_cast<int*>(p);
      std::lock_guard<std::mutex> lock(mu_);
      held_ -= 1;
      released_.notify_all();
    });
    return permit;
  }
  // True once no permit is held (within `wait`).
  bool AllReleased(std::chrono::milliseconds wait) {
    std::unique_lock<std::mutex> lock(mu_);
    return released_.wait_for(lock, wait, [this] { return held_ == 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable released_;
  int held_ = 0;  // guarded by mu_
};

TEST_F(CoreTest, ACallLimiterRefusesBeforeTheToolRunsAndItsPermitLastsTheCall) {
  RefusingLimiter limiter;
  ServerOptions options;
  options.call_limiter = &limiter;
  Build(options);
  connection_->SetCaller(Caller{.principal = "busy"});
  Init();
  Json refused = Call("tools/call", {{"name", "echo"}, {"arguments", {{"x", 1}}}});
  EXPECT_EQ(ErrorCode(refused), rpc_error::kTooManyRequests) << refused.dump();
  EXPECT_EQ(refused["error"]["message"], "slow down (echo)");
  EXPECT_EQ(refused["error"]["data"]["limit"], "--rate-limit-per-user");
  EXPECT_EQ(refused["error"]["data"]["retryAfterSeconds"], 7);
  connection_->SetCaller(Caller{.principal = "calm"});
  Json answered = Call("tools/call", {{"name", "echo"}, {"arguments", {{"x", 1}}}});
  ASSERT_TRUE(answered.contains("result")) << answered.dump();
  // The permit goes with the call once it is over (the worker drops it after answering).
  EXPECT_TRUE(limiter.AllReleased(kWait));
}

TEST_F(CoreTest, ToolsListPaginatesAndRejectsBadCursors) {
  ServerOptions options;
  options.page_size = 3;
  Build(options);
  Init();
  std::vector<std::string> names;
  Json cursor;
  int pages = 0;
  do {
    Json params = Json::object();
    if (!cursor.is_null()) params["cursor"] = cursor;
    Json page = Call("tools/list", params);
    ASSERT_TRUE(page.contains("result")) << page.dump();
    for (const Json& t : page["result"]["tools"]) {
      names.push_back(t["name"]);
      EXPECT_TRUE(t.contains("description"));
      EXPECT_EQ(t["inputSchema"]["type"], "object");
    }
    cursor = page["result"].value("nextCursor", Json());
    ++pages;
  } while (!cursor.is_null());
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(names.size(), 7u);
  EXPECT_EQ(ErrorCode(Call("tools/list", {{"cursor", "bogus!"}})), rpc_error::kInvalidParams);
  EXPECT_EQ(ErrorCode(Call("tools/list", {{"cursor", 5}})), rpc_error::kInvalidParams);
}

TEST_F(CoreTest, ProgressEchoesTheTokenIncreasesStrictlyAndPrecedesTheResponse) {
  Init();
  for (Json token : {Json("tok-1"), Json(77)}) {
    Json response =
        Call("tools/call", {{"name", "progress"}, {"_meta", {{"progressToken", token}}}});
    EXPECT_EQ(response["result"]["content"][0]["text"], "token");
    std::vector<double> values;
    bool response_seen = false;
    for (const auto& s : sink_->Messages()) {
      if (s.message.value("method", "") == "notifications/progress" &&
          s.message["params"]["progressToken"] == token) {
        EXPECT_FALSE(response_seen) << "progress after the response";
        EXPECT_TRUE(s.related_request_id.has_value());
        values.push_back(s.message["params"]["progress"].get<double>());
      }
      if (s.message.contains("id") && s.message["id"] == response["id"]) response_seen = true;
    }
    ASSERT_EQ(values.size(), 3u);
    EXPECT_EQ(values[0], 10);
    EXPECT_GT(values[1], values[0]);
    EXPECT_EQ(values[2], 20);
  }
  // Without a token: no progress notifications at all.
  const size_t before = SentWithMethod("notifications/progress").size();
  EXPECT_EQ(Call("tools/call", {{"name", "progress"}})["result"]["content"][0]["text"], "no token");
  EXPECT_EQ(SentWithMethod("notifications/progress").size(), before);
}

TEST_F(CoreTest, CancelledCallGetsNoResponseAndUnknownIdsAreIgnored) {
  Init();
  connection_->HandleJson(MakeRequest("slow", "tools/call", {{"name", "block"}}));
  ASSERT_TRUE(started_.WaitFor(1));
  // ping is answered while the call runs
  EXPECT_EQ(Call("ping")["result"], Json::object());
  Send(MakeNotification("notifications/cancelled", {{"requestId", "other"}}));
  Send(MakeNotification("notifications/cancelled", {{"requestId", "slow"}, {"reason", "test"}}));
  EXPECT_TRUE(sink_->WaitForDropped("slow", kWait));
  EXPECT_TRUE(connection_->WaitIdle(kWait));
  EXPECT_FALSE(sink_->WaitForResponse("slow", milliseconds(0)).has_value());
  // The id may be reused once the call is gone.
  connection_->HandleJson(MakeRequest("slow", "ping", Json::object()));
  EXPECT_TRUE(sink_->WaitForResponse("slow", kWait).has_value());
}

TEST_F(CoreTest, DuplicateInFlightIdIsRefused) {
  Init();
  connection_->HandleJson(MakeRequest(5, "tools/call", {{"name", "block"}}));
  ASSERT_TRUE(started_.WaitFor(1));
  connection_->HandleJson(MakeRequest(5, "tools/call", {{"name", "echo"}}));
  auto refused = sink_->WaitForResponse(5, kWait);
  ASSERT_TRUE(refused);
  EXPECT_EQ((*refused)["error"]["code"], rpc_error::kInvalidRequest);
  connection_->CancelAll();
  EXPECT_TRUE(connection_->WaitIdle(kWait));
}

TEST_F(CoreTest, BusyServerAnswersWithAClearError) {
  ServerOptions options;
  options.max_concurrent_calls = 1;
  Build(options);
  Init();
  connection_->HandleJson(MakeRequest("a", "tools/call", {{"name", "block"}}));
  ASSERT_TRUE(started_.WaitFor(1));
  Json busy = Call("tools/call", {{"name", "echo"}});
  EXPECT_EQ(ErrorCode(busy), rpc_error::kInternalError);
  EXPECT_NE(busy["error"]["message"].get<std::string>().find("busy"), std::string::npos);
  connection_->CancelAll();
  EXPECT_TRUE(connection_->WaitIdle(kWait));
}

TEST_F(CoreTest, ManyConcurrentCallsAllComplete) {
  Init();
  constexpr int kCalls = 64;
  std::vector<std::thread> senders;
  for (int t = 0; t < 4; ++t) {
    senders.emplace_back([this, t] {
      for (int i = 0; i < kCalls / 4; ++i) {
        connection_->HandleJson(MakeRequest("c" + std::to_string(t * 100 + i), "tools/call",
                                            {{"name", "echo"}, {"arguments", {{"i", i}}}}));
      }
    });
  }
  for (auto& s : senders) s.join();
  for (int t = 0; t < 4; ++t) {
    for (int i = 0; i < kCalls / 4; ++i) {
      auto r = sink_->WaitForResponse("c" + std::to_string(t * 100 + i), kWait);
      ASSERT_TRUE(r);
      const std::string expected = Json{{"i", i}}.dump();
      EXPECT_EQ((*r)["result"]["content"][0]["text"], expected);
    }
  }
}

// --- logging ------------------------------------------------------------------------------------

TEST_F(CoreTest, LogMessagesFollowSetLevel) {
  Init();
  Call("tools/call", {{"name", "logs"}});  // default threshold: info
  auto messages = SentWithMethod("notifications/message");
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0]["params"],
            (Json{{"level", "info"}, {"logger", "t"}, {"data", "info line"}}));
  EXPECT_EQ(messages[1]["params"], (Json{{"level", "error"}, {"data", {{"k", 1}}}}));

  EXPECT_EQ(Call("logging/setLevel", {{"level", "debug"}})["result"], Json::object());
  Call("tools/call", {{"name", "logs"}});
  EXPECT_EQ(SentWithMethod("notifications/message").size(), 5u);

  EXPECT_EQ(Call("logging/setLevel", {{"level", "critical"}})["result"], Json::object());
  Call("tools/call", {{"name", "logs"}});
  EXPECT_EQ(SentWithMethod("notifications/message").size(), 5u);

  EXPECT_EQ(ErrorCode(Call("logging/setLevel", {{"level", "verbose"}})), rpc_error::kInvalidParams);
  EXPECT_EQ(ErrorCode(Call("logging/setLevel", Json::object())), rpc_error::kInvalidParams);
}

// --- resources
// ------------------------------------------------------------------------------------

TEST_F(CoreTest, ResourcesListPagesAcrossProvidersAndReadMapsErrors) {
  Init();
  std::vector<std::string> uris;
  Json cursor;
  do {
    Json params = Json::object();
    if (!cursor.is_null()) params["cursor"] = cursor;
    Json page = Call("resources/list", params);
    ASSERT_TRUE(page.contains("result")) << page.dump();
    for (const Json& r : page["result"]["resources"]) uris.push_back(r["uri"]);
    cursor = page["result"].value("nextCursor", Json());
  } while (!cursor.is_null());
  EXPECT_EQ(uris, (std::vector<std::string>{"a://1", "a://2", "b://3"}));
  EXPECT_EQ(ErrorCode(Call("resources/list", {{"cursor", "nope"}})), rpc_error::kInvalidParams);
  // The cursor is the server's own small token: anything longer, or not of its shape, is refused
  // before it is decoded or parsed (a cursor of nested arrays used to be parsed as JSON).
  const std::string nested = Base64Encode("resources:" + std::string(4000, '['));
  Json refused = Call("resources/list", {{"cursor", nested}});
  EXPECT_EQ(ErrorCode(refused), rpc_error::kInvalidParams);
  EXPECT_NE(refused["error"]["message"].get<std::string>().find("cursor"), std::string::npos);
  EXPECT_NE(refused["error"]["message"].get<std::string>().find("512"), std::string::npos);
  for (const std::string& payload : {std::string("resources:[[[]]]"), std::string("resources:9:x"),
                                     std::string("resources:0:"), std::string("resources:x:1")}) {
    EXPECT_EQ(ErrorCode(Call("resources/list", {{"cursor", Base64Encode(payload)}})),
              rpc_error::kInvalidParams)
        << payload;
  }

  EXPECT_EQ(Call("resources/templates/list")["result"]["resourceTemplates"].size(), 2u);
  EXPECT_EQ(Call("resources/read", {{"uri", "b://3"}})["result"]["contents"][0]["text"], "3");
  Json missing = Call("resources/read", {{"uri", "a://9"}});
  EXPECT_EQ(ErrorCode(missing), rpc_error::kResourceNotFound);
  EXPECT_EQ(missing["error"]["data"]["uri"], "a://9");
  EXPECT_EQ(ErrorCode(Call("resources/read", {{"uri", "zzz://1"}})), rpc_error::kResourceNotFound);
  EXPECT_EQ(ErrorCode(Call("resources/read", Json::object())), rpc_error::kInvalidParams);
}

TEST_F(CoreTest, ResourceNotifierReachesSubscribedConnectionsOnly) {
  Init();
  MemorySink other_sink;
  auto other = server_->Connect(other_sink);
  other->HandleJson(MakeRequest(1, "initialize", {{"protocolVersion", "2025-06-18"}}));
  ASSERT_TRUE(other_sink.WaitForResponse(1, kWait));

  EXPECT_EQ(Call("resources/subscribe", {{"uri", "a://1"}})["result"], Json::object());
  EXPECT_TRUE(connection_->IsSubscribed("a://1"));
  server_->resource_notifier().ResourceUpdated("a://1");
  server_->resource_notifier().ResourceUpdated("a://2");
  auto updates = SentWithMethod("notifications/resources/updated");
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0]["params"]["uri"], "a://1");

  server_->resource_notifier().ResourceListChanged();
  EXPECT_EQ(SentWithMethod("notifications/resources/list_changed").size(), 1u);
  EXPECT_TRUE(other_sink.WaitFor(
      [](const Json& m) { return m.value("method", "") == "notifications/resources/list_changed"; },
      kWait));
  for (const auto& s : other_sink.Messages()) {
    EXPECT_NE(s.message.value("method", ""), "notifications/resources/updated");
  }

  EXPECT_EQ(Call("resources/unsubscribe", {{"uri", "a://1"}})["result"], Json::object());
  server_->resource_notifier().ResourceUpdated("a://1");
  EXPECT_EQ(SentWithMethod("notifications/resources/updated").size(), 1u);
  other->Close();
}

TEST_F(CoreTest, AResourceUpdateReachesOnlyItsPrincipalsConnections) {
  connection_->SetCaller(Caller{.owner = "k", .principal = "a11ce"});
  Init();
  EXPECT_EQ(Call("resources/subscribe", {{"uri", "a://1"}})["result"], Json::object());
  server_->resource_notifier().ResourceUpdated("a://1", "b0b");  // another person's "a://1"
  server_->resource_notifier().ResourceUpdated("a://1");         // the local principal's
  EXPECT_TRUE(SentWithMethod("notifications/resources/updated").empty());
  server_->resource_notifier().ResourceUpdated("a://1", "a11ce");
  auto updates = SentWithMethod("notifications/resources/updated");
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0]["params"]["uri"], "a://1");
  // A new session of another person changes only their listing.
  server_->resource_notifier().ResourceListChanged("b0b");
  server_->resource_notifier().ResourceListChanged();
  EXPECT_TRUE(SentWithMethod("notifications/resources/list_changed").empty());
  server_->resource_notifier().ResourceListChanged("a11ce");
  EXPECT_EQ(SentWithMethod("notifications/resources/list_changed").size(), 1u);
}

TEST_F(CoreTest, ACallerOfOneSessionSubscribesToItAloneAndHearsNoListChanges) {
  connection_->SetCaller(Caller{.owner = "k", .principal = "a11ce", .only_session = "1"});
  Init();
  EXPECT_EQ(Call("resources/subscribe", {{"uri", "a://1"}})["result"], Json::object());
  const Json refused = Call("resources/subscribe", {{"uri", "a://2"}});
  ASSERT_TRUE(refused.contains("error")) << refused;
  EXPECT_FALSE(connection_->IsSubscribed("a://2"));
  server_->resource_notifier().ResourceListChanged("a11ce");
  EXPECT_TRUE(SentWithMethod("notifications/resources/list_changed").empty());
  server_->resource_notifier().ResourceUpdated("a://1", "a11ce");
  EXPECT_EQ(SentWithMethod("notifications/resources/updated").size(), 1u);
}

// --- server→client requests
// -----------------------------------------------------------------------

TEST_F(CoreTest, SendRequestRoundTripsThroughTheClient) {
  Init("2025-11-25", {{"sampling", Json::object()}});
  connection_->HandleJson(MakeRequest("call", "tools/call", {{"name", "ask"}}));
  auto request = sink_->WaitFor(
      [](const Json& m) { return m.value("method", "") == "sampling/createMessage"; }, kWait);
  ASSERT_TRUE(request);
  ASSERT_TRUE(request->contains("id"));
  connection_->HandleJson({{"jsonrpc", "2.0"},
                           {"id", (*request)["id"]},
                           {"result", {{"content", {{"type", "text"}, {"text", "hi"}}}}}});
  auto response = sink_->WaitForResponse("call", kWait);
  ASSERT_TRUE(response);
  EXPECT_EQ((*response)["result"]["isError"], false);
  EXPECT_NE((*response)["result"]["content"][0]["text"].get<std::string>().find("hi"),
            std::string::npos);
}

TEST_F(CoreTest, SendRequestNeedsTheClientCapability) {
  Init();  // no sampling capability
  Json r = Call("tools/call", {{"name", "ask"}});
  EXPECT_EQ(r["result"]["isError"], true);
  EXPECT_TRUE(SentWithMethod("sampling/createMessage").empty());
}

TEST_F(CoreTest, CloseDetachesTheSinkAndCancelsWork) {
  Init();
  connection_->HandleJson(MakeRequest("x", "tools/call", {{"name", "block"}}));
  ASSERT_TRUE(started_.WaitFor(1));
  connection_->Close();
  EXPECT_TRUE(connection_->WaitIdle(kWait));
  const size_t before = sink_->Messages().size();
  connection_->HandleJson(MakeRequest("y", "ping", Json::object()));
  EXPECT_EQ(sink_->Messages().size(), before);
}

// --- prompts and completion
// -------------------------------------------------------------------------

TEST_F(CoreTest, PromptsAndCompletionWhenRegistered) {
  ASSERT_EQ(ErrorCode(Call("prompts/list")), rpc_error::kMethodNotFound);  // none registered
  Build(ServerOptions{});
  ASSERT_TRUE(server_
                  ->RegisterPrompt(
                      {"p", "P", "a prompt", {{"who", "name", true}}},
                      [](const PromptCall& call) -> PromptAnswer {
                        const Json& args = call.arguments;
                        return Json{{"messages",
                                     {{{"role", "user"},
                                       {"content", {{"type", "text"}, {"text", args["who"]}}}}}}};
                      })
                  .ok());
  server_->SetCompletionHandler([](const Json& params) -> Result<Json> {
    return Json{{"values", {params["argument"]["value"]}}};
  });
  Json init = Init();
  EXPECT_TRUE(init["result"]["capabilities"].contains("prompts"));
  EXPECT_TRUE(init["result"]["capabilities"].contains("completions"));
  Json list = Call("prompts/list");
  EXPECT_EQ(list["result"]["prompts"][0]["name"], "p");
  EXPECT_EQ(list["result"]["prompts"][0]["arguments"][0]["required"], true);
  Json got = Call("prompts/get", {{"name", "p"}, {"arguments", {{"who", "me"}}}});
  EXPECT_EQ(got["result"]["messages"][0]["content"]["text"], "me");
  EXPECT_EQ(ErrorCode(Call("prompts/get", {{"name", "p"}})), rpc_error::kInvalidParams);
  EXPECT_EQ(ErrorCode(Call("prompts/get", {{"name", "zz"}})), rpc_error::kInvalidParams);
  Json completion = Call("completion/complete", {{"ref", {{"type", "ref/prompt"}, {"name", "p"}}},
                                                 {"argument", {{"name", "who"}, {"value", "m"}}}});
  EXPECT_EQ(completion["result"]["completion"]["values"], Json::array({"m"}));
}

}  // namespace
}  // namespace imgmcp::mcp
