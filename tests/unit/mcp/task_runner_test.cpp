// TaskRunner (mcp/task_runner.h) on a real worker pool, with a ledger kept in memory.
#include "mcp/task_runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <thread>

#include "common/cancellation.h"
#include "mcp/server.h"
#include "mcp/task_ledger.h"
#include "mcp/task_watch.h"
#include "mcp/worker_pool.h"

namespace imgmcp::mcp {
namespace {

using std::chrono::milliseconds;

// Rows by id; Set refuses a terminal row, and `end_elsewhere` ends a row as another replica would.
// Claim is what a commit does to its task's row (session_store.h UpdateTask): afterwards
// EndUncommitted answers kConflict, as the store does.
class MemoryLedger final : public TaskLedger {
 public:
  Result<TaskSnapshot> Create(const Caller& caller, const std::string&, const Json&,
                              const TaskOptions& options) override {
    std::lock_guard<std::mutex> lock(mu_);
    TaskSnapshot s;
    s.task_id = "task" + std::to_string(rows_.size());
    s.ttl_ms = options.ttl_ms;
    s.poll_interval_ms = options.poll_interval_ms;
    rows_[s.task_id] = {caller.owner, s};
    return s;
  }
  Result<std::optional<TaskSnapshot>> Get(const std::string& id,
                                          const std::string& owner) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++gets_asked_;
    cv_.notify_all();
    auto it = rows_.find(id);
    if (it == rows_.end() || it->second.first != owner) return std::optional<TaskSnapshot>();
    return std::optional<TaskSnapshot>(it->second.second);
  }
  Result<TaskSnapshot> Set(const std::string& id, const std::string&, TaskState state,
                           const std::optional<Json>& payload) override {
    std::lock_guard<std::mutex> lock(mu_);
    TaskSnapshot& s = rows_.at(id).second;
    if (Ended(s)) return MakeError(ErrorCode::kFailedPrecondition, "already ended");
    s.state = state;
    if (state == TaskState::kCompleted) s.result = payload;
    return s;
  }
  Result<TaskSnapshot> EndUncommitted(const std::string& id, const std::string&, TaskState state,
                                      const std::optional<Json>& error) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++ends_asked_;
    cv_.notify_all();
    TaskSnapshot& s = rows_.at(id).second;
    if (Ended(s)) return MakeError(ErrorCode::kFailedPrecondition, "already ended");
    if (claimed_.count(id) > 0) return MakeError(ErrorCode::kConflict, "committed version 3");
    s.state = state;
    s.error = error;
    return s;
  }
  // A commit of the task: true when it claimed the row (not ended), as the stores decide.
  bool Claim(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    ++claims_asked_;
    cv_.notify_all();
    if (Ended(rows_.at(id).second)) return false;
    claimed_.insert(id);
    return true;
  }
  void AwaitClaimsAsked(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return claims_asked_ >= n; });
  }
  // Waits until Get has been asked `n` times (a row read after it sees later changes).
  void AwaitGetsAsked(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return gets_asked_ >= n; });
  }
  // Waits until EndUncommitted has been asked `n` times.
  void AwaitEndsAsked(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return ends_asked_ >= n; });
  }
  void EndElsewhere(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    rows_.at(id).second.state = TaskState::kCancelled;
  }
  TaskState StateOf(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    return rows_.at(id).second.state;
  }
  std::optional<Json> ErrorOf(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    return rows_.at(id).second.error;
  }

 private:
  static bool Ended(const TaskSnapshot& s) {
    return s.state == TaskState::kCompleted || s.state == TaskState::kFailed ||
           s.state == TaskState::kCancelled;
  }
  std::mutex mu_;               // guards rows_, claimed_, ends_asked_, claims_asked_, gets_asked_
  std::condition_variable cv_;  // notified with ends_asked_, claims_asked_ and gets_asked_
  std::map<std::string, std::pair<std::string, TaskSnapshot>> rows_;
  std::set<std::string> claimed_;
  int ends_asked_ = 0;
  int claims_asked_ = 0;
  int gets_asked_ = 0;
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
  MemoryLedger ledger_;
  std::unique_ptr<TaskRunner> runner_ =
      std::make_unique<TaskRunner>(TaskOptions{.max_running = 8, .ledger = &ledger_});
  void TearDown() override { runner_.reset(); }  // shuts down and joins its pool
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
  auto cancelled = runner_->Cancel(task->task_id, "");
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled->kind, CancelOutcome::Kind::kCancelled);
  WaitFor(*runner_, task->task_id, TaskState::kCancelled);
  EXPECT_EQ(ledger_.StateOf(task->task_id), TaskState::kCancelled);
  auto again = runner_->Cancel(task->task_id, "");  // again: it has ended
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->kind, CancelOutcome::Kind::kEnded);
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
  runner_.reset();  // joins its pool: the tool has returned, at_commit is settled
  EXPECT_EQ(at_commit, ErrorCode::kCancelled);
}

TEST_F(TaskRunnerTest, ATaskThisProcessDoesNotRunIsReadFromTheLedger) {
  auto row = ledger_.Create(Caller{}, "t", Json::object(), TaskOptions{});
  ASSERT_TRUE(row.ok());
  auto task = runner_->Get(row->task_id, "");
  ASSERT_TRUE(task);
  EXPECT_EQ(task->state, TaskState::kWorking);
  auto cancelled = runner_->Cancel(row->task_id, "");
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled->kind, CancelOutcome::Kind::kCancelled);
  EXPECT_EQ(ledger_.StateOf(row->task_id), TaskState::kCancelled);
}

// The decision between a commit and a cancel is the ledger's (the store's, atomically): a cancel
// that comes after the commit claimed the task does not make it "cancelled" — the task completes
// with what it committed, and the cancel says it came too late.
TEST_F(TaskRunnerTest, ACancelAfterTheCommitIsTooLateAndTheTaskCompletes) {
  std::atomic<bool> claimed{false};
  auto task = runner_->Start("", CallOf([&](ToolCallContext& ctx) {
                               claimed = ledger_.Claim(ctx.TaskId());  // the commit
                               ledger_.AwaitEndsAsked(1);  // the cancel arrives meanwhile
                               return ToolResult::Text("committed v3");
                             }));
  ASSERT_TRUE(task.ok());
  ledger_.AwaitClaimsAsked(1);
  auto cancelled = runner_->Cancel(task->task_id, "");
  ASSERT_TRUE(cancelled.ok());
  ASSERT_TRUE(claimed);
  EXPECT_EQ(cancelled->kind, CancelOutcome::Kind::kTooLate);
  EXPECT_EQ(cancelled->message, "committed version 3");
  EXPECT_EQ(cancelled->task.state, TaskState::kCompleted);
  TaskSnapshot done = WaitFor(*runner_, task->task_id, TaskState::kCompleted);
  EXPECT_EQ((*done.result)["content"][0]["text"], "committed v3");
  // The run records its end in the ledger just after its snapshot changes; it has once it returns.
  EXPECT_TRUE(runner_->WaitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  EXPECT_EQ(ledger_.StateOf(task->task_id), TaskState::kCompleted);
}

// A cancel that comes first ends the task in the ledger before its commit: the commit finds it
// ended (and so commits nothing), and what the call returns is dropped.
TEST_F(TaskRunnerTest, ACancelBeforeTheCommitLeavesTheCommitNothingToClaim) {
  std::mutex mu;
  std::condition_variable cv;
  bool go = false;
  bool started = false;
  std::atomic<bool> claimed{true};
  auto task = runner_->Start("", CallOf([&](ToolCallContext& ctx) {
                               {
                                 std::unique_lock<std::mutex> lock(mu);
                                 started = true;
                                 cv.notify_all();
                                 cv.wait(lock, [&] { return go; });
                               }
                               claimed = ledger_.Claim(ctx.TaskId());
                               return ToolResult::Text("would have committed");
                             }));
  ASSERT_TRUE(task.ok());
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return started; });
  }
  auto cancelled = runner_->Cancel(task->task_id, "");
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled->kind, CancelOutcome::Kind::kCancelled);
  {
    std::lock_guard<std::mutex> lock(mu);
    go = true;
  }
  cv.notify_all();
  runner_.reset();  // joins: the call has returned
  EXPECT_FALSE(claimed);
  EXPECT_EQ(ledger_.StateOf(task->task_id), TaskState::kCancelled);
}

// A shutdown ends every task in flight failed, saying the server shut down and nothing was
// committed — not cancelled (the client did not ask), and not one whose commit came first.
TEST_F(TaskRunnerTest, AShutdownFailsTasksInFlightSayingSoAndSparesACommittedOne) {
  auto waiting = runner_->Start("", CallOf([&](ToolCallContext& ctx) {
                                  SleepUnlessStopped(std::chrono::seconds(30), ctx.Cancellation());
                                  return ToolResult::Text("late");
                                }));
  std::atomic<bool> claimed{false};
  auto committing = runner_->Start("", CallOf([&](ToolCallContext& ctx) {
                                     claimed = ledger_.Claim(ctx.TaskId());
                                     ledger_.AwaitEndsAsked(2);
                                     return ToolResult::Text("committed");
                                   }));
  ASSERT_TRUE(waiting.ok() && committing.ok());
  ledger_.AwaitClaimsAsked(1);
  EXPECT_EQ(runner_->Running(), 2u);
  runner_->Shutdown("the server shut down; nothing was committed");
  EXPECT_TRUE(runner_->WaitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  EXPECT_EQ(ledger_.StateOf(waiting->task_id), TaskState::kFailed);
  EXPECT_EQ((*ledger_.ErrorOf(waiting->task_id))["message"],
            "the server shut down; nothing was committed");
  EXPECT_EQ(ledger_.StateOf(committing->task_id), TaskState::kCompleted);
  auto refused = runner_->Start("", CallOf([](ToolCallContext&) { return ToolResult::Text(""); }));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
}

// One owner cannot take every worker: beyond its cap a task is refused at once, naming the cap,
// while another owner still starts tasks.
TEST_F(TaskRunnerTest, AnOwnerPastItsCapIsRefusedAndOthersAreNot) {
  std::stop_source release;  // before the runner: its tasks read it until the runner is gone
  TaskRunner runner(TaskOptions{.max_running = 8, .max_per_owner = 2, .ledger = &ledger_});
  auto held = [&release](ToolCallContext&) {
    SleepUnlessStopped(std::chrono::seconds(30), release.get_token());
    return ToolResult::Text("ok");
  };
  ASSERT_TRUE(runner.Start("alice", CallOf(held)).ok());
  ASSERT_TRUE(runner.Start("alice", CallOf(held)).ok());
  auto third = runner.Start("alice", CallOf(held));
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(third.error().message.find("too many tasks in flight for these credentials: 2"),
            std::string::npos)
      << third.error().message;
  auto bobs = runner.Start("bob", CallOf(held));
  ASSERT_TRUE(bobs.ok());
  release.request_stop();
  WaitFor(runner, bobs->task_id, TaskState::kCompleted, "bob");
  EXPECT_TRUE(runner.WaitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  EXPECT_TRUE(runner.Start("alice", CallOf(held)).ok());  // room again once they ended
}

// A task that ended keeps neither its request nor its result in this process: the ledger holds
// them (so tasks/get still answers), and the call — its arguments, its decoded inputs — is let go.
TEST_F(TaskRunnerTest, AnEndedTaskKeepsNeitherItsRequestNorItsResultInMemory) {
  auto request = std::make_shared<std::string>(4 << 20, 'x');  // stands for decoded inputs
  std::weak_ptr<std::string> watched = request;
  TaskCall call = CallOf([request](ToolCallContext&) { return ToolResult::Text("done"); });
  call.arguments = Json{{"image", {{"data", std::string(1 << 20, 'A')}}}};
  request.reset();
  auto task = runner_->Start("", std::move(call));
  ASSERT_TRUE(task.ok());
  WaitFor(*runner_, task->task_id, TaskState::kCompleted);
  EXPECT_TRUE(runner_->WaitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  EXPECT_TRUE(watched.expired());               // the admitted call went with the run
  auto read = runner_->Get(task->task_id, "");  // from the ledger now
  ASSERT_TRUE(read);
  EXPECT_EQ((*read->result)["content"][0]["text"], "done");
}

// A call that hands itself off (a batch generation) leaves its task working in the ledger, the
// ledger's alone: this process neither counts it against its owner nor fails it at shutdown, and
// reads it from the ledger. Without a ledger it could not go on anywhere: it completes as an error.
TEST_F(TaskRunnerTest, AHandedOffTaskStaysWorkingInTheLedgerAndLeavesThisProcess) {
  TaskRunner runner(TaskOptions{.max_running = 8, .max_per_owner = 1, .ledger = &ledger_});
  auto handed = [](ToolCallContext&) {
    ToolResult result;
    result.handed_off = "waiting for the batch window";
    return result;
  };
  auto first = runner.Start("alice", CallOf(handed));
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(runner.WaitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  EXPECT_EQ(runner.Running(), 0u);
  auto second = runner.Start("alice", CallOf(handed));  // the cap of one counts no handed-off task
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_TRUE(runner.WaitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  auto read = runner.Get(first->task_id, "alice");
  ASSERT_TRUE(read);
  EXPECT_EQ(read->state, TaskState::kWorking);
  runner.Shutdown("the server shut down; nothing was committed");
  EXPECT_EQ(ledger_.StateOf(first->task_id), TaskState::kWorking);
  EXPECT_EQ(ledger_.StateOf(second->task_id), TaskState::kWorking);

  TaskRunner memory_only(TaskOptions{.max_running = 2});
  auto lost = memory_only.Start("", CallOf(handed));
  ASSERT_TRUE(lost.ok());
  TaskSnapshot done = WaitFor(memory_only, lost->task_id, TaskState::kCompleted);
  ASSERT_TRUE(done.result);
  EXPECT_EQ((*done.result)["isError"], true);
  EXPECT_NE((*done.result)["content"][0]["text"].get<std::string>().find("in memory only"),
            std::string::npos);
}

// WaitTerminal of a task another process runs (read from the ledger), until it ends or a bound
// passes: then its stop is requested and nullopt returned, so a wait that is never woken fails
// the test instead of hanging it.
class ElsewhereWait {
 public:
  ElsewhereWait(TaskRunner& runner, const std::string& task_id)
      : result_(std::async(std::launch::async, [&runner, task_id, token = stop_.get_token()] {
          return runner.WaitTerminal(task_id, "", token);
        })) {}
  ~ElsewhereWait() { stop_.request_stop(); }
  std::optional<Result<TaskSnapshot>> Get(std::chrono::seconds bound) {
    if (result_.wait_for(bound) != std::future_status::ready) {
      stop_.request_stop();
      result_.wait();
      return std::nullopt;
    }
    return result_.get();
  }

 private:
  std::stop_source stop_;
  std::future<Result<TaskSnapshot>> result_;
};

// Where another process's changes are reported (PostgreSQL's NOTIFY through the server's
// TaskWatch), a waiter is woken by the report, not by reading the row again an hour later.
TEST(TaskRunnerWaitTest, AChangeReportedFromElsewhereWakesTheWaiter) {
  MemoryLedger ledger;
  TaskRunner runner(
      TaskOptions{.max_running = 2, .ledger = &ledger, .changes_elsewhere_reported = true});
  auto row =
      ledger.Create(Caller{}, "t", Json::object(), TaskOptions{.poll_interval_ms = 3'600'000});
  ASSERT_TRUE(row.ok());
  ElsewhereWait wait(runner, row->task_id);
  ledger.AwaitGetsAsked(1);  // the waiter has read the row (working)
  ledger.EndElsewhere(row->task_id);
  runner.NoteChangedElsewhere(row->task_id);
  auto ended = wait.Get(std::chrono::seconds(10));
  ASSERT_TRUE(ended) << "the reported change did not wake WaitTerminal";
  ASSERT_TRUE(ended->ok());
  EXPECT_EQ((*ended)->state, TaskState::kCancelled);
}

// Where nothing reports another process's changes (SQLite: another process on the data dir), the
// row is read again — every poll interval, and never more often than once a second.
TEST(TaskRunnerWaitTest, AChangeNothingReportsIsFoundByReadingTheRowAgain) {
  MemoryLedger ledger;
  TaskRunner runner(TaskOptions{.max_running = 2, .ledger = &ledger});
  auto row = ledger.Create(Caller{}, "t", Json::object(), TaskOptions{.poll_interval_ms = 0});
  ASSERT_TRUE(row.ok());
  ElsewhereWait wait(runner, row->task_id);
  ledger.AwaitGetsAsked(1);
  ledger.EndElsewhere(row->task_id);
  auto ended = wait.Get(std::chrono::seconds(10));
  ASSERT_TRUE(ended) << "WaitTerminal never read the row again";
  ASSERT_TRUE(ended->ok());
  EXPECT_EQ((*ended)->state, TaskState::kCancelled);
}

// Reports a change as the PostgreSQL watch would (on its own thread in the server; here on the
// test's).
class FakeTaskWatch final : public TaskWatch {
 public:
  void SetListener(Listener listener) override {
    std::lock_guard<std::mutex> lock(mu_);
    listener_ = std::move(listener);
  }
  void Report(const Change& change) {
    std::lock_guard<std::mutex> lock(mu_);  // as the watch: SetListener waits for a report
    if (listener_) listener_(change, [] { return std::optional<TaskSnapshot>(); });
  }

 private:
  std::mutex mu_;  // guards listener_, and is held while it runs
  Listener listener_;
};

// The server hands the watch's reports to its runner: tasks/result of a task another replica
// runs answers when that replica's change is announced.
TEST(TaskRunnerWaitTest, TheServersTaskWatchWakesTheWaiter) {
  MemoryLedger ledger;
  FakeTaskWatch watch;
  ServerOptions options;
  options.tasks.ledger = &ledger;
  options.task_watch = &watch;
  McpServer server(options);
  auto row =
      ledger.Create(Caller{}, "t", Json::object(), TaskOptions{.poll_interval_ms = 3'600'000});
  ASSERT_TRUE(row.ok());
  ElsewhereWait wait(server.tasks(), row->task_id);
  ledger.AwaitGetsAsked(1);
  ledger.EndElsewhere(row->task_id);
  watch.Report({row->task_id, "", TaskState::kCancelled});
  auto ended = wait.Get(std::chrono::seconds(10));
  ASSERT_TRUE(ended) << "the watch's report did not wake WaitTerminal";
  ASSERT_TRUE(ended->ok());
  EXPECT_EQ((*ended)->state, TaskState::kCancelled);
}

}  // namespace
}  // namespace imgmcp::mcp
