// TaskRunner (server/mcp/task_runner.h) on a real worker pool, with a ledger kept in memory.
#include "server/mcp/task_runner.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "common/cancellation.h"
#include "server/mcp/task_ledger.h"
#include "server/mcp/worker_pool.h"

namespace imgmcp::mcp {
namespace {

using std::chrono::milliseconds;

// Rows by id; Set refuses a terminal row, and `end_elsewhere` ends a row as another replica would.
class MemoryLedger final : public TaskLedger {
 public:
  Result<TaskSnapshot> Create(const std::string& owner, const std::string&, const Json&,
                              const TaskOptions& options) override {
    std::lock_guard<std::mutex> lock(mu_);
    TaskSnapshot s;
    s.task_id = "task" + std::to_string(rows_.size());
    s.ttl_ms = options.ttl_ms;
    rows_[s.task_id] = {owner, s};
    return s;
  }
  Result<std::optional<TaskSnapshot>> Get(const std::string& id,
                                          const std::string& owner) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = rows_.find(id);
    if (it == rows_.end() || it->second.first != owner) return std::optional<TaskSnapshot>();
    return std::optional<TaskSnapshot>(it->second.second);
  }
  Result<TaskSnapshot> Set(const std::string& id, const std::string&, TaskState state,
                           const std::optional<Json>& payload) override {
    std::lock_guard<std::mutex> lock(mu_);
    TaskSnapshot& s = rows_.at(id).second;
    if (s.state == TaskState::kCompleted || s.state == TaskState::kFailed ||
        s.state == TaskState::kCancelled) {
      return MakeError(ErrorCode::kFailedPrecondition, "already ended");
    }
    s.state = state;
    if (state == TaskState::kCompleted) s.result = payload;
    return s;
  }
  void EndElsewhere(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    rows_.at(id).second.state = TaskState::kCancelled;
  }
  TaskState StateOf(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    return rows_.at(id).second.state;
  }

 private:
  std::mutex mu_;  // guards rows_
  std::map<std::string, std::pair<std::string, TaskSnapshot>> rows_;
};

TaskCall CallOf(std::function<ToolResult(ToolCallContext&)> run) {
  TaskCall call;
  call.tool = "t";
  call.call = std::make_shared<AdmittedCall>();
  call.call->run = std::move(run);
  return call;
}

// Waits (woken every few ms, bounded) until the task reaches `state`.
TaskSnapshot WaitFor(TaskRunner& runner, const std::string& id, TaskState state,
                     const std::string& owner = "") {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    auto task = runner.Get(id, owner);
    if (task && task->state == state) return *task;
    std::this_thread::sleep_for(milliseconds(2));
  }
  ADD_FAILURE() << "task " << id << " never became " << TaskStateName(state);
  return {};
}

class TaskRunnerTest : public ::testing::Test {
 protected:
  WorkerPool pool_{8};
  MemoryLedger ledger_;
  std::unique_ptr<TaskRunner> runner_ =
      std::make_unique<TaskRunner>(pool_, TaskOptions{.ledger = &ledger_});
  void TearDown() override {
    runner_->CancelAll();
    pool_.Shutdown();
  }
};

TEST_F(TaskRunnerTest, ACompletedTaskIsRecordedWithItsResult) {
  auto task =
      runner_->Start("alice", CallOf([](ToolCallContext&) { return ToolResult::Text("done"); }));
  ASSERT_TRUE(task.ok());
  TaskSnapshot done = WaitFor(*runner_, task->task_id, TaskState::kCompleted, "alice");
  EXPECT_EQ((*done.result)["content"][0]["text"], "done");
  // The row is written just after the runner's own snapshot changes: wait for it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ledger_.StateOf(task->task_id) != TaskState::kCompleted &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(2));
  }
  EXPECT_EQ(ledger_.StateOf(task->task_id), TaskState::kCompleted);
  EXPECT_FALSE(runner_->Get(task->task_id, "bob"));  // another owner's task is unknown
}

TEST_F(TaskRunnerTest, CancellingARunningTaskStopsItAndDropsWhatItReturns) {
  auto task = runner_->Start("", CallOf([](ToolCallContext& ctx) {
                               SleepUnlessStopped(std::chrono::seconds(30), ctx.Cancellation());
                               return ToolResult::Text("finished anyway");
                             }));
  ASSERT_TRUE(task.ok());
  ASSERT_TRUE(runner_->Cancel(task->task_id, "").ok());
  WaitFor(*runner_, task->task_id, TaskState::kCancelled);
  EXPECT_EQ(ledger_.StateOf(task->task_id), TaskState::kCancelled);
  EXPECT_TRUE(runner_->Cancel(task->task_id, "").ok());  // again: still an acknowledgement
  EXPECT_FALSE(runner_->Cancel("nope", "").ok());
}

TEST_F(TaskRunnerTest, InputIsGatheredUntilNothingIsPendingThenTheCallRunsAgain) {
  auto task = runner_->Start(
      "", CallOf([](ToolCallContext& ctx) {
        const InputResponses& in = ctx.Inputs();
        if (!in.responses || !in.responses->contains("a") || !in.responses->contains("b")) {
          ToolResult ask;
          ask.input_required = InputRequest{{{"a", Json::object()}, {"b", Json::object()}}, {}};
          return ask;
        }
        return ToolResult::Text((*in.responses)["a"].dump() + (*in.responses)["b"].dump());
      }));
  ASSERT_TRUE(task.ok());
  WaitFor(*runner_, task->task_id, TaskState::kInputRequired);
  ASSERT_TRUE(runner_->Update(task->task_id, "", {{"a", 1}, {"unknown", 2}}).ok());
  auto partial = runner_->Get(task->task_id, "");
  ASSERT_TRUE(partial);
  EXPECT_EQ(partial->state, TaskState::kInputRequired);
  EXPECT_EQ(*partial->input_requests, (Json{{"b", Json::object()}}));
  ASSERT_TRUE(runner_->Update(task->task_id, "", {{"b", 2}}).ok());
  TaskSnapshot done = WaitFor(*runner_, task->task_id, TaskState::kCompleted);
  EXPECT_EQ((*done.result)["content"][0]["text"], "12");
}

TEST_F(TaskRunnerTest, ATaskEndedElsewhereKeepsTheLedgersState) {
  std::mutex mu;
  std::condition_variable cv;
  bool go = false;
  std::optional<ErrorCode> at_commit;  // what the tool learns just before it would commit
  auto task = runner_->Start("", CallOf([&](ToolCallContext& ctx) {
                               std::unique_lock<std::mutex> lock(mu);
                               cv.wait(lock, [&] { return go; });
                               Status wanted = ctx.TaskStillWanted();
                               if (!wanted.ok()) at_commit = wanted.error().code;
                               return ToolResult::Text("late");
                             }));
  ASSERT_TRUE(task.ok());
  ledger_.EndElsewhere(task->task_id);  // cancelled through another replica
  {
    std::lock_guard<std::mutex> lock(mu);
    go = true;
  }
  cv.notify_all();
  TaskSnapshot ended = WaitFor(*runner_, task->task_id, TaskState::kCancelled);
  EXPECT_FALSE(ended.result);
  pool_.Shutdown();  // the tool has returned: at_commit is settled
  EXPECT_EQ(at_commit, ErrorCode::kCancelled);
}

TEST_F(TaskRunnerTest, ATaskThisProcessDoesNotRunIsReadFromTheLedger) {
  auto row = ledger_.Create("", "t", Json::object(), TaskOptions{});
  ASSERT_TRUE(row.ok());
  auto task = runner_->Get(row->task_id, "");
  ASSERT_TRUE(task);
  EXPECT_EQ(task->state, TaskState::kWorking);
  ASSERT_TRUE(runner_->Cancel(row->task_id, "").ok());
  EXPECT_EQ(ledger_.StateOf(row->task_id), TaskState::kCancelled);
}

}  // namespace
}  // namespace imgmcp::mcp
