#include "server/mcp/task_runner.h"

#include <algorithm>
#include <exception>
#include <tuple>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/log.h"
#include "common/random.h"
#include "metrics/metrics.h"
#include "server/mcp/json_rpc.h"
#include "server/mcp/task_ledger.h"
#include "server/mcp/tool_registry.h"

namespace imgmcp::mcp {

namespace {
constexpr char kTasksLog[] = "tasks";

std::string Now() { return FormatRfc3339(std::chrono::system_clock::now()); }

Json ErrorJson(const RpcError& error) {
  Json json = {{"code", error.code}, {"message", error.message}};
  if (error.data) json["data"] = *error.data;
  return json;
}

bool Terminal(TaskState state) {
  return state == TaskState::kCompleted || state == TaskState::kFailed ||
         state == TaskState::kCancelled;
}

// What a task's handler can do: no progress or logs (nobody is listening on a stream), no
// server→client requests (it asks with input_required instead), and its own cancellation.
class TaskCallContext final : public ToolCallContext {
 public:
  TaskCallContext(std::string task_id, const TaskCall& call, std::stop_token token,
                  InputResponses inputs, std::unique_ptr<CallReservation> reservation,
                  std::function<bool()> cancelled)
      : cancelled_(std::move(cancelled)),
        task_id_(std::move(task_id)),
        call_(call),
        token_(std::move(token)),
        inputs_(std::move(inputs)),
        reservation_(std::move(reservation)) {}

  bool HasProgressToken() const override { return false; }
  void ReportProgress(double, std::optional<double>, const std::string&) override {}
  void Log(LogLevel, const std::string&, const Json&) override {}
  std::stop_token Cancellation() const override { return token_; }
  std::string ProtocolVersion() const override { return call_.protocol_version; }
  std::string TraceParent() const override { return call_.traceparent; }
  Result<Json> SendRequest(const std::string& method, const Json&) override {
    return MakeError(ErrorCode::kUnsupported,
                     "a task cannot send " + method + "; it asks with input_required instead");
  }
  std::unique_ptr<CallReservation> TakeReservation() override { return std::move(reservation_); }
  bool Modern() const override { return call_.modern; }
  const Json& ClientCapabilities() const override { return call_.client_capabilities; }
  const InputResponses& Inputs() const override { return inputs_; }
  std::string TaskId() const override { return task_id_; }
  Status TaskStillWanted() override {
    if (!token_.stop_requested() && !cancelled_()) return Status::Ok();
    return MakeError(ErrorCode::kCancelled, "task " + task_id_ + " was cancelled");
  }

 private:
  const std::function<bool()> cancelled_;
  const std::string task_id_;
  const TaskCall& call_;
  const std::stop_token token_;
  const InputResponses inputs_;
  std::unique_ptr<CallReservation> reservation_;
};
}  // namespace

bool DeclaresTasks(const Json& client_capabilities) {
  if (!client_capabilities.is_object()) return false;
  auto extensions = client_capabilities.find("extensions");
  return extensions != client_capabilities.end() && extensions->is_object() &&
         extensions->contains(kTasksExtension);
}

const char* TaskStateName(TaskState state) {
  switch (state) {
    case TaskState::kWorking:
      return "working";
    case TaskState::kInputRequired:
      return "input_required";
    case TaskState::kCompleted:
      return "completed";
    case TaskState::kFailed:
      return "failed";
    case TaskState::kCancelled:
      return "cancelled";
  }
  return "failed";
}

// One task. `id`, `owner`, `call` and `stop` are set at creation (read without a lock); the rest
// is guarded by TaskRunner::mu_.
struct TaskRunner::Entry {
  std::string id;
  std::string owner;
  TaskCall call;
  std::stop_source stop;
  TaskSnapshot snapshot;
  std::chrono::steady_clock::time_point ended;  // when it became terminal
  Json asked = Json::object();                  // input requests still unanswered
  Json answered = Json::object();               // answers gathered so far
  std::optional<std::string> request_state;     // the handler's state between rounds
};

TaskRunner::TaskRunner(WorkerPool& pool, TaskOptions options) : pool_(pool), options_(options) {}

TaskRunner::~TaskRunner() { CancelAll(); }

void TaskRunner::CancelAll() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (auto& [id, entry] : tasks_) entry->stop.request_stop();
  }
  changed_.notify_all();
}

Result<TaskSnapshot> TaskRunner::Start(const std::string& owner, TaskCall call) {
  auto entry = std::make_shared<Entry>();
  entry->owner = owner;
  entry->call = std::move(call);
  if (entry->call.inputs.responses && entry->call.inputs.responses->is_object()) {
    entry->answered = *entry->call.inputs.responses;
  }
  entry->request_state = entry->call.inputs.request_state;
  TaskOptions options = options_;
  if (entry->call.ttl_ms) {
    options.ttl_ms =
        std::clamp(*entry->call.ttl_ms, std::min(kMinTaskTtlMs, options_.ttl_ms), options_.ttl_ms);
  }
  TaskSnapshot& s = entry->snapshot;
  if (options.ledger != nullptr) {
    ASSIGN_OR_RETURN(
        s, options.ledger->Create(owner, entry->call.tool, entry->call.arguments, options));
  } else {
    s.task_id = RandomHex(16);
    s.created_at = s.updated_at = Now();
    s.ttl_ms = options.ttl_ms;
    s.poll_interval_ms = options.poll_interval_ms;
  }
  entry->id = s.task_id;
  TaskSnapshot first;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ForgetExpired();
    tasks_.emplace(s.task_id, entry);
    first = s;
  }
  log::Info(kTasksLog, "task " + first.task_id + " created for " + entry->call.tool);
  if (options_.metrics != nullptr) options_.metrics->RecordTaskStatus(TaskStateName(first.state));
  Submit(entry);
  return first;
}

void TaskRunner::Submit(const std::shared_ptr<Entry>& entry) {
  Status submitted = pool_.Submit([this, entry] { Run(entry); });
  if (submitted.ok()) return;
  std::optional<Json> error;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Terminal(entry->snapshot.state)) return;
    entry->snapshot.state = TaskState::kFailed;
    entry->snapshot.error = error = ErrorJson(InternalError(submitted.error().message));
    entry->snapshot.updated_at = Now();
    entry->ended = std::chrono::steady_clock::now();
  }
  Record(entry, TaskState::kFailed, std::move(error));
  Changed(entry);
}

void TaskRunner::Changed(const std::shared_ptr<Entry>& entry) {
  TaskSnapshot now;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++generation_;
    now = entry->snapshot;
  }
  changed_.notify_all();
  if (on_change_) on_change_(now);
}

bool TaskRunner::CancelledInLedger(const Entry& entry) {
  if (options_.ledger == nullptr) return false;
  auto row = options_.ledger->Get(entry.id, entry.owner);
  return row.ok() && *row && (*row)->state == TaskState::kCancelled;
}

void TaskRunner::Record(const std::shared_ptr<Entry>& entry, TaskState state,
                        std::optional<Json> payload) {
  auto counted = [&] {
    if (options_.metrics != nullptr) options_.metrics->RecordTaskStatus(TaskStateName(state));
  };
  if (options_.ledger == nullptr) return counted();
  auto recorded = options_.ledger->Set(entry->id, entry->owner, state, payload);
  if (recorded.ok()) return counted();
  log::Warn(kTasksLog, "task " + entry->id + ": " + recorded.error().message);
  if (recorded.error().code != ErrorCode::kFailedPrecondition) return;
  auto row = options_.ledger->Get(entry->id, entry->owner);
  if (!row.ok() || !*row) return;
  std::lock_guard<std::mutex> lock(mu_);
  entry->snapshot = **row;
  if (Terminal(entry->snapshot.state)) entry->stop.request_stop();
}

void TaskRunner::Run(const std::shared_ptr<Entry>& entry) {
  InputResponses inputs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Terminal(entry->snapshot.state)) return;
    if (!entry->answered.empty()) inputs.responses = entry->answered;
    inputs.request_state = entry->request_state;
  }
  ToolResult result;
  std::optional<Json> error;
  {
    TaskCallContext context(entry->id, entry->call, entry->stop.get_token(), std::move(inputs),
                            std::move(entry->call.call->reservation),
                            [this, entry] { return CancelledInLedger(*entry); });
    try {
      result = entry->call.call->run(context);
    } catch (const std::exception& e) {  // a protocol-level failure: the task fails
      log::Error(kTasksLog, "task of " + entry->call.tool + " threw: " + e.what());
      error = ErrorJson(InternalError(std::string("Internal error: ") + e.what()));
    }
  }
  TaskState state;
  std::optional<Json> payload;
  {
    std::lock_guard<std::mutex> lock(mu_);
    TaskSnapshot& s = entry->snapshot;
    if (Terminal(s.state)) return;  // cancelled meanwhile: whatever it returned is dropped
    s.updated_at = Now();
    if (error) {
      s.state = TaskState::kFailed;
      s.error = payload = std::move(error);
    } else if (result.input_required && !entry->call.modern) {
      s.state = TaskState::kCompleted;  // as a direct legacy call answers (connection.cpp)
      s.result = payload = ToolResultToJson(ToolResult::ErrorText(
          "Tool " + entry->call.tool + " needs input from the client, which protocol " +
          entry->call.protocol_version + " cannot ask for"));
    } else if (result.input_required) {
      s.state = TaskState::kInputRequired;
      entry->asked = result.input_required->requests.is_object() ? result.input_required->requests
                                                                 : Json::object();
      entry->request_state = result.input_required->state;
      s.input_requests = entry->asked;
    } else {
      s.state = TaskState::kCompleted;
      s.result = payload = ToolResultToJson(std::move(result));
    }
    if (Terminal(s.state)) entry->ended = std::chrono::steady_clock::now();
    state = s.state;
  }
  log::Info(kTasksLog, "task " + entry->id + " " + TaskStateName(state));
  Record(entry, state, std::move(payload));
  Changed(entry);
}

std::shared_ptr<TaskRunner::Entry> TaskRunner::Find(const std::string& task_id,
                                                    const std::string& owner) {
  ForgetExpired();
  auto it = tasks_.find(task_id);
  if (it == tasks_.end() || it->second->owner != owner) return nullptr;
  return it->second;
}

void TaskRunner::ForgetExpired() {
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(tasks_, [now](const auto& item) {
    const Entry& e = *item.second;
    return Terminal(e.snapshot.state) &&
           now - e.ended > std::chrono::milliseconds(e.snapshot.ttl_ms);
  });
}

std::optional<TaskSnapshot> TaskRunner::Get(const std::string& task_id, const std::string& owner) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto entry = Find(task_id, owner)) return entry->snapshot;
  }
  if (options_.ledger == nullptr) return std::nullopt;
  auto row = options_.ledger->Get(task_id, owner);
  if (!row.ok()) {
    log::Warn(kTasksLog, "task " + task_id + ": " + row.error().message);
    return std::nullopt;
  }
  return *row;
}

Status TaskRunner::Cancel(const std::string& task_id, const std::string& owner,
                          std::optional<TaskSnapshot>* ended) {
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard<std::mutex> lock(mu_);
    entry = Find(task_id, owner);
    if (!entry) return CancelElsewhere(task_id, owner, ended);
    if (Terminal(entry->snapshot.state)) {
      if (ended != nullptr) *ended = entry->snapshot;
      return Status::Ok();
    }
    entry->snapshot.state = TaskState::kCancelled;
    entry->snapshot.input_requests.reset();
    entry->snapshot.updated_at = Now();
    entry->ended = std::chrono::steady_clock::now();
    entry->stop.request_stop();
  }
  log::Info(kTasksLog, "task " + task_id + " cancelled");
  Record(entry, TaskState::kCancelled, std::nullopt);
  Changed(entry);
  return Status::Ok();
}

Status TaskRunner::CancelElsewhere(const std::string& task_id, const std::string& owner,
                                   std::optional<TaskSnapshot>* ended) {
  if (options_.ledger == nullptr) return MakeError(ErrorCode::kNotFound, "unknown task " + task_id);
  ASSIGN_OR_RETURN(std::optional<TaskSnapshot> row, options_.ledger->Get(task_id, owner));
  if (!row) return MakeError(ErrorCode::kNotFound, "unknown task " + task_id);
  if (Terminal(row->state)) {
    if (ended != nullptr) *ended = *row;
    return Status::Ok();
  }
  // Run by another process: its row says cancelled, which that process finds before it records
  // a result (and its commit is the task's idempotency key's, never repeated).
  auto cancelled = options_.ledger->Set(task_id, owner, TaskState::kCancelled, std::nullopt);
  if (cancelled.ok()) return Status::Ok();
  if (cancelled.error().code != ErrorCode::kFailedPrecondition) return cancelled.error();
  // It ended meanwhile.
  if (ended != nullptr) {
    ASSIGN_OR_RETURN(row, options_.ledger->Get(task_id, owner));
    if (row) *ended = *row;
  }
  return Status::Ok();
}

Result<TaskSnapshot> TaskRunner::WaitTerminal(const std::string& task_id, const std::string& owner,
                                              std::stop_token stop) {
  while (true) {
    uint64_t seen;
    {
      std::lock_guard<std::mutex> lock(mu_);
      seen = generation_;
    }
    std::optional<TaskSnapshot> task = Get(task_id, owner);
    if (!task) return MakeError(ErrorCode::kNotFound, "unknown task " + task_id);
    if (Terminal(task->state)) return *task;
    // This process's changes wake it; another process's are found by reading the ledger again.
    const auto poll = std::chrono::milliseconds(std::max<int64_t>(task->poll_interval_ms, 50));
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait_for(lock, stop, poll, [&] { return stopping_ || generation_ != seen; });
    if (stop.stop_requested() || stopping_) {
      return MakeError(ErrorCode::kCancelled, "stopped waiting for task " + task_id);
    }
  }
}

Result<TaskList> TaskRunner::List(const std::string& owner,
                                  const std::optional<std::string>& cursor, size_t limit) {
  if (options_.ledger == nullptr) return ListInMemory(owner, cursor, limit);
  return options_.ledger->List(owner, cursor, static_cast<int>(limit));
}

// Newest first (createdAt, then id, descending); the cursor is the last id of the page before.
Result<TaskList> TaskRunner::ListInMemory(const std::string& owner,
                                          const std::optional<std::string>& cursor, size_t limit) {
  std::vector<TaskSnapshot> mine;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ForgetExpired();
    for (const auto& [id, entry] : tasks_) {
      if (entry->owner == owner) mine.push_back(entry->snapshot);
    }
  }
  std::sort(mine.begin(), mine.end(), [](const TaskSnapshot& a, const TaskSnapshot& b) {
    return std::tie(a.created_at, a.task_id) > std::tie(b.created_at, b.task_id);
  });
  size_t begin = 0;
  if (cursor) {
    auto after = std::find_if(mine.begin(), mine.end(),
                              [&](const TaskSnapshot& t) { return t.task_id == *cursor; });
    if (after == mine.end()) return MakeError(ErrorCode::kInvalidArgument, "invalid cursor");
    begin = static_cast<size_t>(after - mine.begin()) + 1;
  }
  TaskList page;
  const size_t end = std::min(mine.size(), begin + std::max<size_t>(limit, 1));
  page.tasks.assign(mine.begin() + static_cast<std::ptrdiff_t>(begin),
                    mine.begin() + static_cast<std::ptrdiff_t>(end));
  if (end < mine.size()) page.next_cursor = page.tasks.back().task_id;
  return page;
}

Status TaskRunner::Update(const std::string& task_id, const std::string& owner,
                          const Json& responses) {
  std::shared_ptr<Entry> resume;
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto entry = Find(task_id, owner);
    known = entry != nullptr;
    if (entry && entry->snapshot.state == TaskState::kInputRequired) {
      for (const auto& [key, value] : responses.items()) {
        if (entry->asked.erase(key) > 0) entry->answered[key] = value;
      }
      entry->snapshot.input_requests = entry->asked;
      entry->snapshot.updated_at = Now();
      if (entry->asked.empty()) {
        entry->snapshot.state = TaskState::kWorking;
        entry->snapshot.input_requests.reset();
        resume = entry;
      }
    }
  }
  // Another process's task: nothing here waits for its answers.
  if (!known && !Get(task_id, owner)) {
    return MakeError(ErrorCode::kNotFound, "unknown task " + task_id);
  }
  if (resume) {
    Record(resume, TaskState::kWorking, std::nullopt);
    Changed(resume);
    Submit(resume);
  }
  return Status::Ok();
}

}  // namespace imgmcp::mcp
