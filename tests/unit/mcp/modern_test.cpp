// The core in the modern era (2026-07-28): requests served from their own _meta, results with
// resultType and caching hints, per-request logging and progress, removed methods, the modern
// error codes, subscriptions/listen, MRTR results, and both eras on one connection.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mcp/connection.h"
#include "mcp/json_rpc.h"
#include "mcp/memory_sink.h"
#include "mcp/server.h"
#include "tests/unit/mcp/tool_def.h"

namespace imgmcp::mcp {
namespace {

using std::chrono::milliseconds;

class FixedResources final : public ResourceProvider {
 public:
  Result<ResourcePage> List(const Caller&, const std::optional<std::string>&) override {
    ResourcePage page;
    page.resources.push_back({{"uri", "a://1"}, {"name", "one"}});
    return page;
  }
  Json Templates() override { return Json::array(); }
  bool Handles(const std::string& uri) const override { return uri.rfind("a://", 0) == 0; }
  Result<Json> Read(const Caller&, const std::string& uri) override {
    if (uri != "a://1") return MakeError(ErrorCode::kNotFound, "no " + uri);
    return Json{{"contents", {{{"uri", uri}, {"text", "1"}}}}};
  }
};

class ModernTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<McpServer>(ServerOptions{});
    ASSERT_TRUE(server_
                    ->RegisterTool(Def("talk"),
                                   [](const Json&, ToolCallContext& ctx) {
                                     ctx.ReportProgress(1, 2, "half");
                                     ctx.Log(LogLevel::kDebug, "t", "debug line");
                                     ctx.Log(LogLevel::kWarning, "t", "warning line");
                                     return ToolResult::Text(ctx.Modern() ? "modern" : "legacy");
                                   })
                    .ok());
    ToolDefinition gated = Def("gated");  // a task that ends when the test opens its gate
    gated.task_support = TaskSupport::kRequired;
    ASSERT_TRUE(server_
                    ->RegisterTool(gated,
                                   [this](const Json&, ToolCallContext&) {
                                     std::unique_lock<std::mutex> lock(gate_mu_);
                                     gate_cv_.wait(lock, [this] { return gate_open_; });
                                     return ToolResult::Text("through");
                                   })
                    .ok());
    ToolDefinition sampler = Def("sampler");
    sampler.required_client_capabilities = {{"sampling", Json::object()}};
    ASSERT_TRUE(
        server_
            ->RegisterTool(
                sampler, [](const Json&, ToolCallContext&) { return ToolResult::Text("Success"); })
            .ok());
    ASSERT_TRUE(
        server_
            ->RegisterTool(Def("ask"),
                           [](const Json&, ToolCallContext& ctx) {
                             if (ctx.Inputs().responses) {
                               return ToolResult::Text(ctx.Inputs().responses->dump() + " " +
                                                       ctx.Inputs().request_state.value_or(""));
                             }
                             ToolResult r;
                             r.input_required = InputRequest{
                                 {{"name", {{"method", "elicitation/create"}, {"params", {}}}}},
                                 "state-1"};
                             return r;
                           })
            .ok());
    // A prompt that asks for the roots first (MRTR), then answers with its state.
    ASSERT_TRUE(server_
                    ->RegisterPrompt(
                        {"needs", "Needs", "asks first", {}},
                        [](const PromptCall& call) -> Result<PromptAnswer> {
                          if (!call.inputs.responses) {
                            PromptAnswer ask;
                            ask.input_required = InputRequest{
                                {{"ctx", {{"method", "roots/list"}, {"params", {}}}}}, "p-state"};
                            return ask;
                          }
                          return PromptAnswer(
                              Json{{"messages",
                                    {{{"role", "user"},
                                      {"content",
                                       {{"type", "text"},
                                        {"text", call.inputs.request_state.value_or("")}}}}}}});
                        })
                    .ok());
    server_->AddResourceProvider(std::make_shared<FixedResources>());
    connection_ = server_->Connect(sink_);
  }
  void TearDown() override {
    OpenGate();  // a gated task still running ends before the server goes
    connection_->Close();
    connection_.reset();
    server_.reset();
  }

  static Json Meta(Json extra = Json::object()) {
    Json meta = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                 {"io.modelcontextprotocol/clientCapabilities", Json::object()},
                 {"io.modelcontextprotocol/clientInfo", {{"name", "unit"}, {"version", "0"}}}};
    meta.update(extra);
    return meta;
  }

  // A modern request (its _meta from Meta(meta_extra)); returns the response.
  Json Call(const std::string& method, Json params = Json::object(),
            Json meta_extra = Json::object()) {
    const Json id = next_id_++;
    params["_meta"] = Meta(std::move(meta_extra));
    connection_->HandleJson(MakeRequest(id, method, std::move(params)));
    auto response = sink_.WaitForResponse(id, kWait);
    EXPECT_TRUE(response.has_value()) << "no response to " << method;
    return response.value_or(Json());
  }

  std::optional<MemorySink::Sent> SentFor(const Json& id) {
    for (const auto& s : sink_.Messages()) {
      if (s.kind == OutgoingMessage::Kind::kResponse && s.related_request_id == id) return s;
    }
    return std::nullopt;
  }

  void OpenGate() {
    {
      std::lock_guard<std::mutex> lock(gate_mu_);
      gate_open_ = true;
    }
    gate_cv_.notify_all();
  }
  std::mutex gate_mu_;  // guards gate_open_
  std::condition_variable gate_cv_;
  bool gate_open_ = false;

  std::vector<Json> Notifications(const std::string& method) {
    std::vector<Json> out;
    for (const auto& s : sink_.Messages()) {
      if (s.kind == OutgoingMessage::Kind::kNotification && s.message["method"] == method) {
        out.push_back(s.message);
      }
    }
    return out;
  }

  MemorySink sink_;
  std::unique_ptr<McpServer> server_;
  std::shared_ptr<Connection> connection_;
  int next_id_ = 1;
};

TEST_F(ModernTest, RequestsAreServedFromTheirOwnMetaWithoutInitialize) {
  Json discover = Call("server/discover");
  EXPECT_EQ(discover["result"]["resultType"], "complete");
  EXPECT_EQ(discover["result"]["supportedVersions"][0], "2026-07-28");
  EXPECT_EQ(discover["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "imgmcp");
  EXPECT_TRUE(discover["result"].contains("ttlMs"));
  Json tools = Call("tools/list");
  EXPECT_EQ(tools["result"]["tools"].size(), 4u);  // talk, gated, sampler, ask
  EXPECT_EQ(tools["result"]["cacheScope"], "public");
  Json resources = Call("resources/list");
  EXPECT_EQ(resources["result"]["resources"][0]["uri"], "a://1");
  EXPECT_EQ(resources["result"]["ttlMs"], 0);
  EXPECT_EQ(resources["result"]["cacheScope"], "private");
  Json read = Call("resources/read", {{"uri", "a://1"}});
  EXPECT_EQ(read["result"]["resultType"], "complete");
  EXPECT_TRUE(read["result"].contains("cacheScope"));
  Json call = Call("tools/call", {{"name", "talk"}});
  EXPECT_EQ(call["result"]["content"][0]["text"], "modern");
  EXPECT_EQ(call["result"]["resultType"], "complete");
  EXPECT_FALSE(call["result"].contains("ttlMs"));
  EXPECT_FALSE(connection_->initialized());  // no legacy session was opened
}

TEST_F(ModernTest, RemovedAndUnknownMethodsAreMethodNotFoundBeforeDispatch) {
  for (const char* removed : {"initialize", "ping", "logging/setLevel", "resources/subscribe",
                              "resources/unsubscribe", "no/such/method"}) {
    Json response = Call(removed, {{"uri", "a://1"}, {"level", "info"}});
    EXPECT_EQ(response["error"]["code"], rpc_error::kMethodNotFound) << removed;
    auto sent = SentFor(response["id"]);
    ASSERT_TRUE(sent.has_value());
    EXPECT_TRUE(sent->rejected_before_dispatch) << removed;
    EXPECT_EQ(sent->error_code, rpc_error::kMethodNotFound);
  }
}

TEST_F(ModernTest, UnsupportedVersionNamesWhatIsSupportedAndEchoesTheId) {
  const Json id = "v-1";
  connection_->HandleJson(
      MakeRequest(id, "tools/list",
                  {{"_meta", Meta({{"io.modelcontextprotocol/protocolVersion", "2099-01-01"}})}}));
  auto response = sink_.WaitForResponse(id, kWait);
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ((*response)["id"], "v-1");
  EXPECT_EQ((*response)["error"]["code"], rpc_error::kUnsupportedProtocolVersion);
  EXPECT_EQ((*response)["error"]["data"]["requested"], "2099-01-01");
  EXPECT_EQ((*response)["error"]["data"]["supported"].size(), 4u);
}

TEST_F(ModernTest, MissingCapabilityIsMinus32021BeforeTheToolRuns) {
  Json refused = Call("tools/call", {{"name", "sampler"}});
  EXPECT_EQ(refused["error"]["code"], rpc_error::kMissingClientCapability);
  EXPECT_EQ(refused["error"]["data"]["requiredCapabilities"], (Json{{"sampling", Json::object()}}));
  Json ok = Call("tools/call", {{"name", "sampler"}},
                 {{"io.modelcontextprotocol/clientCapabilities", {{"sampling", Json::object()}}}});
  EXPECT_EQ(ok["result"]["content"][0]["text"], "Success");
}

TEST_F(ModernTest, LogsOnlyForARequestThatAskedAndProgressWithItsToken) {
  Call("tools/call", {{"name", "talk"}});
  EXPECT_TRUE(Notifications("notifications/message").empty());
  EXPECT_TRUE(Notifications("notifications/progress").empty());  // no token
  Json with = Call("tools/call", {{"name", "talk"}},
                   {{"io.modelcontextprotocol/logLevel", "info"}, {"progressToken", 0}});
  auto logs = Notifications("notifications/message");
  ASSERT_EQ(logs.size(), 1u);  // debug is below info
  EXPECT_EQ(logs[0]["params"]["level"], "warning");
  auto progress = Notifications("notifications/progress");
  ASSERT_EQ(progress.size(), 1u);
  EXPECT_EQ(progress[0]["params"]["progressToken"], 0);
  // Both went out on the request's own stream, before its answer.
  for (const auto& s : sink_.Messages()) {
    if (s.kind == OutgoingMessage::Kind::kNotification) {
      EXPECT_EQ(s.related_request_id, with["id"]);
    }
  }
}

TEST_F(ModernTest, ResourceNotFoundIsInvalidParamsWithTheUri) {
  Json modern = Call("resources/read", {{"uri", "a://missing"}});
  EXPECT_EQ(modern["error"]["code"], rpc_error::kInvalidParams);
  EXPECT_EQ(modern["error"]["data"]["uri"], "a://missing");
}

Json Elicits() { return {{"io.modelcontextprotocol/clientCapabilities", {{"elicitation", {}}}}}; }

TEST_F(ModernTest, InputRequiredResultsAndTheirRetries) {
  Json first = Call("tools/call", {{"name", "ask"}}, Elicits());
  EXPECT_EQ(first["result"]["resultType"], "input_required");
  EXPECT_EQ(first["result"]["inputRequests"]["name"]["method"], "elicitation/create");
  // The client gets the state sealed; the tool sees its own plain state on the retry.
  const Json sealed = first["result"]["requestState"];
  ASSERT_TRUE(sealed.is_string());
  EXPECT_NE(sealed, "state-1");
  Json retry = Call("tools/call",
                    {{"name", "ask"},
                     {"inputResponses", {{"name", {{"action", "accept"}}}}},
                     {"requestState", sealed}},
                    Elicits());
  EXPECT_EQ(retry["result"]["resultType"], "complete");
  EXPECT_NE(retry["result"]["content"][0]["text"].get<std::string>().find(" state-1"),
            std::string::npos);
}

TEST_F(ModernTest, AlteredOrTransplantedRequestStateIsRefusedBeforeTheToolRuns) {
  Json first = Call("tools/call", {{"name", "ask"}}, Elicits());
  const std::string sealed = first["result"]["requestState"].get<std::string>();
  Json inputs = {{"name", {{"action", "accept"}}}};
  for (const std::string& bad :
       {sealed + "-TAMPERED", std::string("state-1"), std::string(""), std::string("1.2.3")}) {
    Json refused =
        Call("tools/call", {{"name", "ask"}, {"inputResponses", inputs}, {"requestState", bad}},
             Elicits());
    EXPECT_EQ(refused["error"]["code"], rpc_error::kInvalidParams) << bad;
    EXPECT_NE(refused["error"]["message"].get<std::string>().find("requestState"),
              std::string::npos);
  }
  // A state is bound to the request it was issued for: another tool cannot use it.
  Json elsewhere =
      Call("tools/call", {{"name", "talk"}, {"inputResponses", inputs}, {"requestState", sealed}});
  EXPECT_EQ(elsewhere["error"]["code"], rpc_error::kInvalidParams);
}

TEST_F(ModernTest, InputIsAskedOnlyForCapabilitiesTheClientDeclared) {
  // "ask" wants an elicitation; a client that cannot elicit gets -32021 naming it.
  Json refused = Call("tools/call", {{"name", "ask"}});
  EXPECT_EQ(refused["error"]["code"], rpc_error::kMissingClientCapability);
  EXPECT_EQ(refused["error"]["data"]["requiredCapabilities"],
            (Json{{"elicitation", Json::object()}}));
}

TEST_F(ModernTest, PromptsAskForInputToo) {
  const Json roots = {{"io.modelcontextprotocol/clientCapabilities", {{"roots", {}}}}};
  Json first = Call("prompts/get", {{"name", "needs"}}, roots);
  EXPECT_EQ(first["result"]["resultType"], "input_required");
  Json retry = Call("prompts/get",
                    {{"name", "needs"},
                     {"inputResponses", {{"ctx", {{"roots", Json::array()}}}}},
                     {"requestState", first["result"]["requestState"]}},
                    roots);
  EXPECT_EQ(retry["result"]["resultType"], "complete");
  EXPECT_EQ(retry["result"]["messages"][0]["content"]["text"], "p-state");
  // A tool's state does not open a prompt.
  Json tool_state = Call("tools/call", {{"name", "ask"}}, Elicits());
  Json refused = Call("prompts/get",
                      {{"name", "needs"},
                       {"inputResponses", {{"ctx", {{"roots", Json::array()}}}}},
                       {"requestState", tool_state["result"]["requestState"]}},
                      roots);
  EXPECT_EQ(refused["error"]["code"], rpc_error::kInvalidParams);
}

TEST_F(ModernTest, ListenAcknowledgesFirstTagsAndFiltersItsNotifications) {
  const Json listen_id = "listen:0";
  Json params = {
      {"_meta", Meta()},
      {"notifications", {{"resourcesListChanged", true}, {"resourceSubscriptions", {"a://1"}}}}};
  connection_->HandleJson(MakeRequest(listen_id, "subscriptions/listen", params));
  auto ack = sink_.WaitFor(
      [](const Json& m) {
        return m.value("method", "") == "notifications/subscriptions/acknowledged";
      },
      kWait);
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ((*ack)["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen:0");
  EXPECT_EQ((*ack)["params"]["notifications"]["resourceSubscriptions"], Json({"a://1"}));

  connection_->NotifyResourceUpdated("a://2");       // not asked for
  connection_->NotifyListChanged(ListKind::kTools);  // not asked for
  connection_->NotifyResourceUpdated("a://1");
  server_->resource_notifier().ResourceListChanged();
  auto updated = Notifications("notifications/resources/updated");
  ASSERT_EQ(updated.size(), 1u);
  EXPECT_EQ(updated[0]["params"]["uri"], "a://1");
  EXPECT_EQ(updated[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen:0");
  EXPECT_EQ(Notifications("notifications/resources/list_changed").size(), 1u);
  EXPECT_TRUE(Notifications("notifications/tools/list_changed").empty());
  for (const auto& s : sink_.Messages()) {
    if (s.kind == OutgoingMessage::Kind::kNotification) {
      EXPECT_EQ(s.related_request_id, listen_id);  // all on the listen stream
    }
  }
  EXPECT_EQ(connection_->InFlightCount(), 1u);

  // stdio cancellation: notifications/cancelled ends it, with no response.
  connection_->HandleJson(
      MakeNotification("notifications/cancelled", {{"requestId", "listen:0"}, {"_meta", Meta()}}));
  EXPECT_TRUE(sink_.WaitForDropped(listen_id, kWait));
  EXPECT_EQ(connection_->InFlightCount(), 0u);
  connection_->NotifyResourceUpdated("a://1");
  EXPECT_EQ(Notifications("notifications/resources/updated").size(), 1u);
  EXPECT_FALSE(SentFor(listen_id).has_value());
}

TEST_F(ModernTest, EndingSubscriptionsAnswersThemGracefully) {
  connection_->HandleJson(
      MakeRequest(7, "subscriptions/listen",
                  {{"_meta", Meta()}, {"notifications", {{"toolsListChanged", true}}}}));
  ASSERT_TRUE(sink_.WaitFor(
      [](const Json& m) {
        return m.value("method", "") == "notifications/subscriptions/acknowledged";
      },
      kWait));
  connection_->EndSubscriptions();
  auto end = sink_.WaitForResponse(7, kWait);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ((*end)["result"]["resultType"], "complete");
  EXPECT_EQ((*end)["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7);
  EXPECT_TRUE(connection_->WaitIdle(milliseconds(100)));
}

TEST_F(ModernTest, BothErasOnOnePipe) {
  // Legacy before initialize: refused; modern: served; then a legacy session opens.
  connection_->HandleJson(MakeRequest(100, "tools/list", Json::object()));
  EXPECT_EQ((*sink_.WaitForResponse(100, kWait))["error"]["code"], rpc_error::kInvalidRequest);
  EXPECT_TRUE(Call("tools/list").contains("result"));
  connection_->HandleJson(MakeRequest(
      101, "initialize", {{"protocolVersion", "2025-11-25"}, {"capabilities", Json::object()}}));
  EXPECT_EQ((*sink_.WaitForResponse(101, kWait))["result"]["protocolVersion"], "2025-11-25");
  connection_->HandleJson(MakeRequest(102, "tools/call", {{"name", "talk"}}));
  Json legacy = *sink_.WaitForResponse(102, kWait);
  EXPECT_EQ(legacy["result"]["content"][0]["text"], "legacy");
  EXPECT_FALSE(legacy["result"].contains("resultType"));  // legacy results stay as they were
  EXPECT_EQ(Call("tools/call", {{"name", "talk"}})["result"]["content"][0]["text"], "modern");
  // The legacy era keeps -32002 for an unknown resource.
  connection_->HandleJson(MakeRequest(103, "resources/read", {{"uri", "a://missing"}}));
  EXPECT_EQ((*sink_.WaitForResponse(103, kWait))["error"]["code"], rpc_error::kResourceNotFound);
  // A tool asking for input in the legacy era gets an error result instead.
  connection_->HandleJson(MakeRequest(104, "tools/call", {{"name", "ask"}}));
  EXPECT_EQ((*sink_.WaitForResponse(104, kWait))["result"]["isError"], true);
}

TEST(ModernOnlyTest, EveryRequestNeedsItsMetaAndBatchesAreRefused) {
  McpServer server(ServerOptions{});
  MemorySink sink;
  auto connection = server.Connect(sink, ConnectionMode::kModernOnly);
  connection->HandleJson(MakeRequest(1, "tools/list", Json::object()));
  auto refused = sink.WaitForResponse(1, kWait);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ((*refused)["error"]["code"], rpc_error::kInvalidParams);
  connection->HandleJson(Json::array({MakeRequest(2, "tools/list", Json::object())}));
  ASSERT_TRUE(sink.WaitFor([](const Json& m) { return !m.contains("id"); }, kWait));
  ASSERT_EQ(sink.Messages().size(), 2u);
  EXPECT_EQ(sink.Messages()[1].message["error"]["code"], rpc_error::kInvalidRequest);
  EXPECT_FALSE(sink.Messages()[1].message.contains("id"));  // no null ids in the modern schema
  connection->Close();
}

TEST_F(ModernTest, ListenForATaskGetsItsStatusNotifications) {
  const Json tasks = {{"io.modelcontextprotocol/clientCapabilities",
                       {{"extensions", {{"io.modelcontextprotocol/tasks", Json::object()}}}}}};
  Json created = Call("tools/call", {{"name", "gated"}, {"arguments", Json::object()}}, tasks);
  ASSERT_EQ(created["result"]["resultType"], "task") << created.dump();
  const std::string task_id = created["result"]["taskId"];
  // Without the extension a listen that names tasks is refused.
  Json refused = Call("subscriptions/listen", {{"notifications", {{"taskIds", {task_id}}}}});
  EXPECT_EQ(refused["error"]["code"], -32021);

  Json params = {{"_meta", Meta(tasks)},
                 {"notifications", {{"taskIds", {task_id, "not-a-task-of-mine"}}}}};
  connection_->HandleJson(MakeRequest("listen:t", "subscriptions/listen", params));
  auto ack = sink_.WaitFor(
      [](const Json& m) {
        return m.value("method", "") == "notifications/subscriptions/acknowledged";
      },
      kWait);
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ((*ack)["params"]["notifications"]["taskIds"], Json({task_id}));
  OpenGate();
  auto done = sink_.WaitFor(
      [](const Json& m) {
        return m.value("method", "") == "notifications/tasks" &&
               m["params"].value("status", "") == "completed";
      },
      kWait);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ((*done)["params"]["taskId"], task_id);
  EXPECT_EQ((*done)["params"]["result"]["content"][0]["text"], "through");
  EXPECT_EQ((*done)["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen:t");
}

}  // namespace
}  // namespace imgmcp::mcp
