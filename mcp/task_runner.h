// MCP Tasks (the io.modelcontextprotocol/tasks extension of the 2026-07-28 revision, and the
// experimental tasks utility of 2025-11-25 on the same tasks): a tools/call the server answers
// with a task handle instead of its result. The call is admitted when it
// arrives (so it keeps its place, e.g. its session's FIFO turn), then runs on the runner's own
// worker pool (not the one direct calls use, so a flood of tasks never leaves a direct call
// without a worker) detached from the request and its connection; the client polls tasks/get,
// answers input_required with tasks/update and may tasks/cancel it. The wire shapes are in
// task_json.h.
//
// Tasks are keyed by an unguessable id and scoped to their owner (an opaque digest of the
// caller's credentials, "" without any); an owner has at most TaskOptions::max_per_owner tasks in
// flight here. With a ledger (task_ledger.h: the session store's rows) every change is recorded
// there and a task this process does not run (another replica's, one from before a restart, or
// one of this process that ended) is read from it; this process keeps only what it alone can (the
// call while it runs, its stop token, the input requests asked) and forgets a task once the
// ledger holds its end. A cancel or a shutdown is decided in the ledger first, atomically against
// the task's commit (session/session_store.h UpdateTask): either the task ends cancelled (or
// failed by the shutdown) and commits nothing, or its commit came first and it completes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/result.h"
#include "common/thread_annotations.h"
#include "mcp/core_metrics.h"
#include "mcp/tool.h"
#include "mcp/worker_pool.h"

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
  // Tasks running at once (each on a thread of the runner's pool), over all owners.
  size_t max_running = 256;
  // Tasks of one owner that are not terminal, in this process (0: no cap). Beyond it Start
  // answers kResourceExhausted naming the cap.
  size_t max_per_owner = 32;
  // Where tasks are kept durably (task_ledger.h); nullptr: in this process's memory only. Must
  // outlive the runner.
  TaskLedger* ledger = nullptr;
  // Where each status a task of this process reaches is counted (imgmcp_tasks_total); may be null.
  CoreMetrics* metrics = nullptr;
  // True when every change another process makes to the ledger's tasks is reported through
  // TaskRunner::NoteChangedElsewhere (the server sets it when it has a TaskWatch, task_watch.h).
  bool changes_elsewhere_reported = false;
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
  Caller caller;          // who made it: its owner owns the task
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

// What a cancel found (TaskRunner::Cancel).
struct CancelOutcome {
  enum class Kind {
    kCancelled,  // the task is cancelled now; nothing of it is committed
    kEnded,      // it had already ended (task: as it ended)
    kTooLate,    // its commit came first: it completes with that version (message says which)
  };
  Kind kind = Kind::kCancelled;
  TaskSnapshot task;    // the task after the cancel
  std::string message;  // kTooLate: why
};

class TaskRunner {
 public:
  explicit TaskRunner(TaskOptions options);
  ~TaskRunner();  // Shutdown(), then joins the pool
  TaskRunner(const TaskRunner&) = delete;
  TaskRunner& operator=(const TaskRunner&) = delete;

  // Creates a working task owned by `call.caller.owner` and starts it on the pool. The snapshot is
  // what the CreateTaskResult shows; the task exists (tasks/get finds it) before this returns.
  Result<TaskSnapshot> Start(TaskCall call);
  // The same for a caller known only by its owner.
  Result<TaskSnapshot> Start(const std::string& owner, TaskCall call) {
    call.caller.owner = owner;
    return Start(std::move(call));
  }
  // The owner's task; nullopt when unknown, expired or another owner's.
  std::optional<TaskSnapshot> Get(const std::string& task_id, const std::string& owner);
  // Cancels a task that is not terminal, unless its commit already happened (then it completes:
  // kTooLate, after waiting briefly for it to be recorded). A terminal one is left as it is
  // (kEnded). kNotFound as Get.
  Result<CancelOutcome> Cancel(const std::string& task_id, const std::string& owner);
  // How often WaitTerminal reads a task another process runs again (below): at least this far
  // apart where its changes are not reported, and this far apart where they are.
  static constexpr std::chrono::seconds kMinReRead{1};
  static constexpr std::chrono::seconds kReportedReRead{30};
  // Waits until the owner's task is terminal and returns it. Woken by each change of the task:
  // this process's, and another process's reported through NoteChangedElsewhere. A task another
  // process runs is also read from the ledger again, for what nothing reports: every poll
  // interval (at least kMinReRead) where changes elsewhere are not reported, and every
  // kReportedReRead where they are (a report lost while the watch reconnected). kNotFound as Get;
  // kCancelled when `stop` is requested or the runner is shutting down.
  Result<TaskSnapshot> WaitTerminal(const std::string& task_id, const std::string& owner,
                                    std::stop_token stop);
  // A task changed in the ledger by another process (reported by the server's TaskWatch): wakes
  // the WaitTerminal calls waiting for it, which read it again.
  void NoteChangedElsewhere(const std::string& task_id);
  // The owner's tasks, newest first, `limit` a page (the ledger's when there is one). A cursor
  // this did not make is kInvalidArgument.
  Result<TaskList> List(const std::string& owner, const std::optional<std::string>& cursor,
                        size_t limit);
  // Delivers inputResponses to an input_required task: answers to keys it asked for are kept
  // (others ignored); once none is pending the call runs again with every answer. kNotFound as
  // Get.
  Status Update(const std::string& task_id, const std::string& owner, const Json& responses);
  // Tasks whose call is running (or waiting for its session's turn) in this process.
  size_t Running() const;
  // Waits until no task runs here (Running() == 0), `deadline` passes, or `stop` is requested;
  // woken by every task that ends. True when none runs.
  bool WaitIdle(std::chrono::steady_clock::time_point deadline, std::stop_token stop = {});
  // Server shutdown: every task that is not terminal ends failed with `reason` (a message saying
  // the server shut down and nothing was committed) and its call is stopped — except one whose
  // commit already happened, which completes. New tasks are refused from now on. Idempotent.
  void Shutdown(const std::string& reason);
  // Called (on whichever thread made it) with the task after each change this process makes;
  // set once, before the first task.
  void OnChange(std::function<void(const TaskSnapshot&)> listener) {
    on_change_ = std::move(listener);
  }

 private:
  struct Entry;
  void Submit(const std::shared_ptr<Entry>& entry);
  void Run(const std::shared_ptr<Entry>& entry);
  // Start, once the owner's count admitted it: the ledger's row, then the run.
  Result<TaskSnapshot> Create(const std::string& owner, TaskCall call);
  // The state Run records for what the call returned (mu_ held; the entry is not terminal).
  std::optional<Json> Conclude(Entry& entry, const TaskCall& call, ToolResult result,
                               std::optional<Json> error) REQUIRES(mu_);
  // A call that handed itself off (ToolResult::handed_off; mu_ held): the task stays working with
  // `message`, the ledger's row alone now; it is no longer counted or kept here.
  void HandOffLocked(Entry& entry, std::string message) REQUIRES(mu_);
  // Makes the entry terminal in memory: its end time, its owner's count, its call dropped, its
  // stop requested when `stop` (mu_ held).
  void EndLocked(Entry& entry, TaskState state, bool stop) REQUIRES(mu_);
  // Ends a task that is not terminal with `state` (cancelled, or failed with `error`) unless its
  // commit came first (kTooLate; with `await_completion`, after waiting briefly for the run to
  // record its completion): decided in the ledger, then mirrored here.
  Result<CancelOutcome> EndUncommitted(const std::shared_ptr<Entry>& entry, TaskState state,
                                       const std::optional<Json>& error, bool await_completion);
  // After a local change was recorded: a terminal task the ledger holds is forgotten here.
  void ForgetRecorded(const std::shared_ptr<Entry>& entry);
  // The owner's task kept here, or nullptr (mu_ held).
  std::shared_ptr<Entry> Find(const std::string& task_id, const std::string& owner) REQUIRES(mu_);
  // Get, and whether the task lives in this process (`here`) or was read from the ledger.
  std::optional<TaskSnapshot> Read(const std::string& task_id, const std::string& owner,
                                   bool* here);
  // WaitTerminal once its waiter is counted in waited_.
  Result<TaskSnapshot> AwaitTerminal(const std::string& task_id, const std::string& owner,
                                     std::stop_token stop);
  // Counts a change of the task for those waiting for it (mu_ held).
  void CountChangeLocked(const std::string& task_id) REQUIRES(mu_);
  void ForgetExpired() REQUIRES(mu_);  // mu_ held
  // Records a local change in the ledger (without mu_). A task the ledger has already ended
  // (cancelled elsewhere) takes the ledger's state. True when the ledger now holds the task's
  // end (so this process may forget it).
  bool Record(const std::shared_ptr<Entry>& entry, TaskState state,
              const std::optional<Json>& payload);
  Result<CancelOutcome> CancelElsewhere(const std::string& task_id, const std::string& owner) const;
  // True when the ledger's row of a task is terminal (another replica cancelled it, say).
  bool EndedInLedger(const Entry& entry) const;

  void Changed(const std::shared_ptr<Entry>& entry);  // tells on_change_ (without mu_)

  Result<TaskList> ListInMemory(const std::string& owner, const std::optional<std::string>& cursor,
                                size_t limit);

  std::function<void(const TaskSnapshot&)> on_change_;
  const TaskOptions options_;
  // Guards tasks_, every Entry's mutable fields, active_, running_, waited_ and stopping_ (the
  // analysis checks the fields here, not an Entry's: it cannot name another object's mutex).
  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<Entry>> tasks_ GUARDED_BY(mu_);
  // By owner: tasks not terminal (and ones being created).
  std::map<std::string, size_t> active_ GUARDED_BY(mu_);
  size_t running_ GUARDED_BY(mu_) = 0;  // entries submitted to pool_ whose Run has not returned
  // The tasks WaitTerminal calls wait for: how many wait, and the changes counted so far (every
  // change of the task, made here or reported from elsewhere).
  struct Waited {
    size_t waiters = 0;
    uint64_t changes = 0;
  };
  std::map<std::string, Waited> waited_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;  // Shutdown was called
  std::condition_variable_any changed_;    // notified with waited_, running_ and stopping_
  WorkerPool pool_;  // last: joined (in the destructor) while everything above is alive
};

}  // namespace imgmcp::mcp
