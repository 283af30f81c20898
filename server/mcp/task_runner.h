// MCP Tasks (the io.modelcontextprotocol/tasks extension of the 2026-07-28 revision, and the
// experimental tasks utility of 2025-11-25 on the same tasks): a tools/call the server answers
// with a task handle instead of its result. The call is admitted when it
// arrives (so it keeps its place, e.g. its session's FIFO turn), then runs on the worker pool
// detached from the request and its connection; the client polls tasks/get, answers
// input_required with tasks/update and may tasks/cancel it. The wire shapes are in task_json.h.
//
// Tasks are keyed by an unguessable id and scoped to their owner (an opaque digest of the
// caller's credentials, "" without any). With a ledger (task_ledger.h: the session store's rows)
// every change is recorded there and a task this process does not run (another replica's, or one
// from before a restart) is read from it; this process keeps what only it can (the stop token,
// the input requests asked) and forgets a terminal task ttl after it ended. Cancelling one that is
// running requests its stop token (the tool's Cancellation()), and whatever it returns afterwards
// is dropped: the task stays cancelled.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/result.h"
#include "server/mcp/tool.h"
#include "server/mcp/worker_pool.h"

namespace imgmcp::metrics {
class Metrics;
}  // namespace imgmcp::metrics

namespace imgmcp::mcp {

// The extension's name, in client capabilities and in server/discover.
inline constexpr char kTasksExtension[] = "io.modelcontextprotocol/tasks";

// True when `client_capabilities` declares the tasks extension (extensions[kTasksExtension]).
bool DeclaresTasks(const Json& client_capabilities);

enum class TaskState { kWorking, kInputRequired, kCompleted, kFailed, kCancelled };
const char* TaskStateName(TaskState state);

// A task as tasks/get shows it.
struct TaskSnapshot {
  std::string task_id;
  TaskState state = TaskState::kWorking;
  std::string status_message;
  std::string created_at;  // RFC 3339 UTC
  std::string updated_at;
  int64_t ttl_ms = 0;
  int64_t poll_interval_ms = 0;
  std::optional<Json> result;          // completed: the CallToolResult
  std::optional<Json> error;           // failed: the JSON-RPC error object
  std::optional<Json> input_requests;  // input_required: {key: {method, params}} still unanswered
};

class TaskLedger;

struct TaskOptions {
  int64_t ttl_ms = 3'600'000;  // how long a finished task stays readable
  int64_t poll_interval_ms = 500;
  // Where tasks are kept durably (task_ledger.h); nullptr: in this process's memory only. Must
  // outlive the runner.
  TaskLedger* ledger = nullptr;
  // Where each status a task of this process reaches is counted (imgmcp_tasks_total); may be null.
  metrics::Metrics* metrics = nullptr;
};

// What a task runs: the admitted call and what its handler may read.
struct TaskCall {
  std::string tool;
  Json arguments = Json::object();  // as received (kept with the task's row)
  std::shared_ptr<AdmittedCall> call;
  std::string protocol_version;
  Json client_capabilities = Json::object();
  std::string traceparent;
  InputResponses inputs;  // an MRTR retry's answers, which the first run sees
  // False for a 2025-11-25 task (task-augmented tools/call of a legacy session): its handler
  // cannot ask for input, so an input_required answer fails the call instead.
  bool modern = true;
  // The ttl the client asked for (2025-11-25 params.task.ttl); kept within [kMinTaskTtlMs, the
  // runner's ttl]. Unset: the runner's.
  std::optional<int64_t> ttl_ms;
};

// The shortest ttl a client may ask for: long enough to read the result of a task that ends.
inline constexpr int64_t kMinTaskTtlMs = 10'000;

// One page of an owner's tasks, newest first (tasks/list of the 2025-11-25 tasks utility).
struct TaskList {
  std::vector<TaskSnapshot> tasks;
  std::optional<std::string> next_cursor;
};

class TaskRunner {
 public:
  TaskRunner(WorkerPool& pool, TaskOptions options);
  ~TaskRunner();  // CancelAll()
  TaskRunner(const TaskRunner&) = delete;
  TaskRunner& operator=(const TaskRunner&) = delete;

  // Creates a working task owned by `owner` and starts it on the pool. The snapshot is what the
  // CreateTaskResult shows; the task exists (tasks/get finds it) before this returns.
  Result<TaskSnapshot> Start(const std::string& owner, TaskCall call);
  // The owner's task; nullopt when unknown, expired or another owner's.
  std::optional<TaskSnapshot> Get(const std::string& task_id, const std::string& owner);
  // Cancels a task that is not terminal (a terminal one is left as it is, and `ended`, when
  // given, is set to its state). kNotFound as Get.
  Status Cancel(const std::string& task_id, const std::string& owner,
                std::optional<TaskSnapshot>* ended = nullptr);
  // Waits until the owner's task is terminal and returns it: woken by this process's changes,
  // and reading the ledger every poll interval for a task another process runs. kNotFound as
  // Get; kCancelled when `stop` is requested or the runner is shutting down.
  Result<TaskSnapshot> WaitTerminal(const std::string& task_id, const std::string& owner,
                                    std::stop_token stop);
  // The owner's tasks, newest first, `limit` a page (the ledger's when there is one). A cursor
  // this did not make is kInvalidArgument.
  Result<TaskList> List(const std::string& owner, const std::optional<std::string>& cursor,
                        size_t limit);
  // Delivers inputResponses to an input_required task: answers to keys it asked for are kept
  // (others ignored); once none is pending the call runs again with every answer. kNotFound as
  // Get.
  Status Update(const std::string& task_id, const std::string& owner, const Json& responses);
  // Requests every task's stop token (server shutdown); their states are left as they are.
  void CancelAll();
  // Called (on whichever thread made it) with the task after each change this process makes;
  // set once, before the first task.
  void OnChange(std::function<void(const TaskSnapshot&)> listener) {
    on_change_ = std::move(listener);
  }

 private:
  struct Entry;
  void Submit(const std::shared_ptr<Entry>& entry);
  void Run(const std::shared_ptr<Entry>& entry);
  std::shared_ptr<Entry> Find(const std::string& task_id, const std::string& owner);
  void ForgetExpired();  // mu_ held
  // Records a local change in the ledger (without mu_). A task the ledger has already ended
  // (cancelled elsewhere) takes the ledger's state.
  void Record(const std::shared_ptr<Entry>& entry, TaskState state, std::optional<Json> payload);
  Status CancelElsewhere(const std::string& task_id, const std::string& owner,
                         std::optional<TaskSnapshot>* ended);
  // True when the ledger's row of a task says cancelled (another replica cancelled it).
  bool CancelledInLedger(const Entry& entry);

  void Changed(const std::shared_ptr<Entry>& entry);  // tells on_change_ (without mu_)

  Result<TaskList> ListInMemory(const std::string& owner, const std::optional<std::string>& cursor,
                                size_t limit);

  std::function<void(const TaskSnapshot&)> on_change_;
  WorkerPool& pool_;
  const TaskOptions options_;
  std::mutex mu_;  // guards tasks_, every Entry's mutable fields, generation_ and stopping_
  std::map<std::string, std::shared_ptr<Entry>> tasks_;
  uint64_t generation_ = 0;  // bumped on every change this process makes (wakes WaitTerminal)
  bool stopping_ = false;    // CancelAll was called
  std::condition_variable_any changed_;  // notified with generation_ and stopping_
};

}  // namespace imgmcp::mcp
