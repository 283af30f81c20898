// The 2025-11-25 tasks utility (mcp/legacy_task_json.h, legacy_task_methods.cpp) on a
// legacy session of the core with an in-memory sink, and the TaskRunner parts it uses (List,
// WaitTerminal, Cancel reporting a task that had ended, the requested ttl).
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

#include "mcp/connection.h"
#include "mcp/legacy_task_json.h"
#include "mcp/memory_sink.h"
#include "mcp/server.h"
#include "tests/unit/mcp/tool_def.h"

namespace imgmcp::mcp {
namespace {

using std::chrono::milliseconds;
constexpr char kRelated[] = "io.modelcontextprotocol/related-task";

class LegacyTasksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.tasks.ttl_ms = 60'000;
    options.tasks.poll_interval_ms = 20;
    server_ = std::make_unique<McpServer>(options);
    // Ends when the test opens its gate; "fail" makes it an isError result.
    ASSERT_TRUE(server_
                    ->RegisterTool(Def("gated", TaskSupport::kOptional),
                                   [this](const Json& args, ToolCallContext& ctx) {
                                     std::unique_lock<std::mutex> lock(gate_mu_);
                                     gate_cv_.wait(lock, ctx.Cancellation(),
                                                   [this] { return gate_open_; });
                                     if (args.value("fail", false)) {
                                       return ToolResult::ErrorText("it went wrong");
                                     }
                                     return ToolResult::Text("through");
                                   })
                    .ok());
    ASSERT_TRUE(
        server_
            ->RegisterTool(
                Def("asks", TaskSupport::kOptional),
                [](const Json&, ToolCallContext&) {
                  ToolResult r;
                  r.input_required = InputRequest{{{"x", {{"method", "elicitation/create"}}}}, {}};
                  return r;
                })
            .ok());
    ASSERT_TRUE(
        server_
            ->RegisterTool(Def("plain", TaskSupport::kForbidden),
                           [](const Json&, ToolCallContext&) { return ToolResult::Text("plain"); })
            .ok());
    connection_ = server_->Connect(sink_);
  }
  void TearDown() override {
    OpenGate();
    connection_->Close();
    connection_.reset();
    server_.reset();
  }

  void OpenGate() {
    {
      std::lock_guard<std::mutex> lock(gate_mu_);
      gate_open_ = true;
    }
    gate_cv_.notify_all();
  }

  Json Initialize(const std::string& version = "2025-11-25") {
    Json response = Request("initialize", {{"protocolVersion", version},
                                           {"capabilities", Json::object()},
                                           {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
    connection_->HandleJson({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
    return response;
  }

  Json Request(const std::string& method, Json params) {
    const int id = next_id_++;
    connection_->HandleJson(
        {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
    auto response = sink_.WaitForResponse(id, kWait);
    EXPECT_TRUE(response) << method;
    return response.value_or(Json::object());
  }

  Json StartTask(const std::string& tool, Json args = Json::object(), Json task = Json::object()) {
    Json response =
        Request("tools/call", {{"name", tool}, {"arguments", std::move(args)}, {"task", task}});
    EXPECT_TRUE(response.contains("result")) << response.dump();
    return response["result"]["task"];
  }

  Json WaitEnded(const std::string& task_id) {
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    Json task;
    do {
      task = Request("tasks/get", {{"taskId", task_id}})["result"];
      const std::string status = task.value("status", "");
      if (status == "completed" || status == "failed" || status == "cancelled") return task;
      std::this_thread::sleep_for(milliseconds(2));
    } while (std::chrono::steady_clock::now() < deadline);
    ADD_FAILURE() << "task " << task_id << " never ended: " << task.dump();
    return task;
  }

  MemorySink sink_;
  std::unique_ptr<McpServer> server_;
  std::shared_ptr<Connection> connection_;
  int next_id_ = 1;
  std::mutex gate_mu_;  // guards gate_open_
  std::condition_variable_any gate_cv_;
  bool gate_open_ = false;
};

TEST_F(LegacyTasksTest, InitializeAndToolsListDeclareTheUtility) {
  Json init = Initialize();
  EXPECT_EQ(init["result"]["capabilities"]["tasks"], TasksUtilityCapability());
  Json tools = Request("tools/list", Json::object())["result"]["tools"];
  for (const Json& tool : tools) {
    if (tool["name"] == "plain") {
      EXPECT_FALSE(tool.contains("execution"));
    } else {
      EXPECT_EQ(tool["execution"], Json({{"taskSupport", "optional"}})) << tool.dump();
    }
  }
}

TEST_F(LegacyTasksTest, AnOlderSessionHasNoneOfIt) {
  Json init = Initialize("2025-06-18");
  EXPECT_FALSE(init["result"]["capabilities"].contains("tasks"));
  const Json listed = Request("tools/list", Json::object());  // outlives the loop below
  for (const Json& tool : listed["result"]["tools"]) {
    EXPECT_FALSE(tool.contains("execution"));
  }
  OpenGate();
  Json plain = Request("tools/call", {{"name", "gated"}, {"task", Json::object()}});
  EXPECT_EQ(plain["result"]["content"][0]["text"], "through");  // params.task ignored
  EXPECT_EQ(Request("tasks/list", Json::object())["error"]["code"], -32601);
  EXPECT_EQ(Request("tasks/get", {{"taskId", "x"}})["error"]["code"], -32601);
}

TEST_F(LegacyTasksTest, ATaskIsCreatedPolledAndItsResultWaitedFor) {
  Initialize();
  Json task = StartTask("gated", Json::object(), {{"ttl", 30'000}});
  EXPECT_EQ(task["status"], "working");
  EXPECT_EQ(task["ttl"], 30'000);
  EXPECT_EQ(task["pollInterval"], 20);
  const std::string id = task["taskId"];
  // tasks/result waits: no answer until the gate opens.
  connection_->HandleJson(
      {{"jsonrpc", "2.0"}, {"id", "r"}, {"method", "tasks/result"}, {"params", {{"taskId", id}}}});
  EXPECT_EQ(Request("tasks/get", {{"taskId", id}})["result"]["status"], "working");
  EXPECT_FALSE(sink_.WaitForResponse("r", milliseconds(0)));
  OpenGate();
  auto result = sink_.WaitForResponse("r", kWait);
  ASSERT_TRUE(result);
  EXPECT_EQ((*result)["result"]["content"][0]["text"], "through");
  EXPECT_EQ((*result)["result"]["_meta"][kRelated], Json({{"taskId", id}}));
  auto status = sink_.WaitFor(
      [&](const Json& m) {
        return m.value("method", "") == "notifications/tasks/status" &&
               m["params"]["taskId"] == id && m["params"]["status"] == "completed";
      },
      kWait);
  EXPECT_TRUE(status);
  // Cancelling it now is refused, naming its status.
  Json refused = Request("tasks/cancel", {{"taskId", id}});
  EXPECT_EQ(refused["error"]["code"], -32602);
  EXPECT_NE(refused["error"]["message"].get<std::string>().find("'completed'"), std::string::npos);
}

TEST_F(LegacyTasksTest, AnIsErrorResultIsAFailedTask) {
  Initialize();
  OpenGate();
  const std::string id = StartTask("gated", {{"fail", true}})["taskId"];
  Json task = WaitEnded(id);
  EXPECT_EQ(task["status"], "failed");
  EXPECT_EQ(task["statusMessage"], "it went wrong");
  Json payload = Request("tasks/result", {{"taskId", id}})["result"];
  EXPECT_EQ(payload["isError"], true);
}

TEST_F(LegacyTasksTest, ALegacyTaskCannotAskForInput) {
  Initialize();
  const std::string id = StartTask("asks")["taskId"];
  EXPECT_EQ(WaitEnded(id)["status"], "failed");
  Json payload = Request("tasks/result", {{"taskId", id}})["result"];
  EXPECT_EQ(payload["isError"], true);
}

TEST_F(LegacyTasksTest, CancellingAWorkingTaskAndItsResult) {
  Initialize();
  const std::string id = StartTask("gated")["taskId"];
  Json cancelled = Request("tasks/cancel", {{"taskId", id}})["result"];
  EXPECT_EQ(cancelled["status"], "cancelled");
  EXPECT_EQ(cancelled["taskId"], id);
  EXPECT_EQ(Request("tasks/result", {{"taskId", id}})["error"]["code"], -32602);
}

TEST_F(LegacyTasksTest, Refusals) {
  Initialize();
  EXPECT_EQ(Request("tools/call", {{"name", "plain"}, {"task", Json::object()}})["error"]["code"],
            -32601);
  EXPECT_EQ(Request("tools/call", {{"name", "gated"}, {"task", {{"ttl", -1}}}})["error"]["code"],
            -32602);
  EXPECT_EQ(Request("tools/call", {{"name", "gated"}, {"task", "x"}})["error"]["code"], -32602);
  for (const char* method : {"tasks/get", "tasks/result", "tasks/cancel"}) {
    EXPECT_EQ(Request(method, {{"taskId", "nope"}})["error"]["code"], -32602) << method;
  }
  EXPECT_EQ(Request("tasks/list", {{"cursor", "nope"}})["error"]["code"], -32602);
}

TEST_F(LegacyTasksTest, ListingPagesNewestFirstAndOnlyTheOwners) {
  Initialize();
  OpenGate();
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(StartTask("gated")["taskId"]);
  auto other = server_->Connect(sink_);
  other->SetCaller(Caller{.owner = "someone else"});
  Json all = Request("tasks/list", Json::object())["result"];
  ASSERT_EQ(all["tasks"].size(), 3u);
  EXPECT_FALSE(all.contains("nextCursor"));
  auto page = server_->tasks().List("", std::nullopt, 2);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->tasks.size(), 2u);
  ASSERT_TRUE(page->next_cursor);
  auto rest = server_->tasks().List("", page->next_cursor, 2);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->tasks.size(), 1u);
  EXPECT_FALSE(rest->next_cursor);
  EXPECT_TRUE(server_->tasks().List("someone else", std::nullopt, 10)->tasks.empty());
  other->Close();
}

TEST(LegacyTaskJsonTest, Shapes) {
  TaskSnapshot task;
  task.task_id = "t1";
  task.state = TaskState::kCompleted;
  task.created_at = task.updated_at = "2026-01-01T00:00:00Z";
  task.ttl_ms = 0;
  task.poll_interval_ms = 500;
  task.result = Json{
      {"content", {{{"type", "text"}, {"text", "ok"}}}}, {"isError", false}, {"_meta", {{"k", 1}}}};
  Json json = LegacyTaskJson(task);
  EXPECT_EQ(json["status"], "completed");
  EXPECT_TRUE(json["ttl"].is_null());
  EXPECT_FALSE(json.contains("statusMessage"));
  EXPECT_FALSE(json.contains("result"));
  Json payload = LegacyTaskPayload(task);
  EXPECT_EQ(payload["_meta"]["k"], 1);
  EXPECT_EQ(payload["_meta"][kRelated]["taskId"], "t1");
  EXPECT_EQ(LegacyCreateTaskResult(task)["task"]["taskId"], "t1");

  task.state = TaskState::kFailed;
  task.result.reset();
  task.error = Json{{"code", -32603}, {"message", "runner stopped"}};
  EXPECT_EQ(LegacyTaskJson(task)["statusMessage"], "runner stopped");

  EXPECT_FALSE(ReadAugmentation("2025-11-25", Def("x", TaskSupport::kOptional), std::nullopt)
                   .value()
                   .has_value());
  EXPECT_FALSE(
      ReadAugmentation("2025-06-18", Def("x", TaskSupport::kOptional), Json::object()).value());
  EXPECT_EQ(ReadAugmentation("2025-11-25", Def("x", TaskSupport::kOptional), Json{{"ttl", 5}})
                .value()
                ->ttl_ms,
            5);
  EXPECT_EQ(ReadAugmentation("2025-11-25", Def("x", TaskSupport::kForbidden), Json::object())
                .error()
                .code,
            ErrorCode::kUnsupported);
}

TEST(TaskRunnerWaitTest, StopsWhenAskedAndKnowsNoStrangers) {
  TaskRunner runner(TaskOptions{.ttl_ms = 60'000, .poll_interval_ms = 10, .max_running = 4});
  std::stop_source gate;
  TaskCall call;
  call.tool = "t";
  call.call = std::make_shared<AdmittedCall>();
  call.call->run = [token = gate.get_token()](ToolCallContext&) {
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, token, [] { return false; });  // woken by the gate's stop request
    return ToolResult::Text("done");
  };
  call.ttl_ms = 1;  // raised to the least a client may ask for
  auto task = runner.Start("", std::move(call));
  ASSERT_TRUE(task.ok());
  EXPECT_EQ(task->ttl_ms, kMinTaskTtlMs);
  std::stop_source stop;
  stop.request_stop();
  EXPECT_EQ(runner.WaitTerminal(task->task_id, "", stop.get_token()).error().code,
            ErrorCode::kCancelled);
  EXPECT_EQ(runner.WaitTerminal("nope", "", std::stop_token()).error().code, ErrorCode::kNotFound);
  gate.request_stop();
  auto done = runner.WaitTerminal(task->task_id, "", std::stop_token());
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->state, TaskState::kCompleted);
  auto ended = runner.Cancel(task->task_id, "");
  ASSERT_TRUE(ended.ok());
  EXPECT_EQ(ended->kind, CancelOutcome::Kind::kEnded);
  EXPECT_EQ(ended->task.state, TaskState::kCompleted);
}

}  // namespace
}  // namespace imgmcp::mcp
