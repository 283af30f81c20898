#include "mcp/task_runner.h"

#include <algorithm>
#include <exception>
#include <tuple>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/log.h"
#include "common/random.h"
#include "mcp/json_rpc.h"
#include "mcp/task_ledger.h"
#include "mcp/tool_registry.h"

namespace imgmcp::mcp {

namespace {
constexpr char kTasksLog[] = "tasks";
// How long a cancel that came too late waits for the task's run to record its completion (it has
// committed; what is left is building its result).
constexpr auto kCommittedTaskWait = std::chrono::seconds(30);

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
  TaskCallContext(std::string task_id, std::shared_ptr<const TaskCall> call, std::stop_token token,
                  InputResponses inputs, std::unique_ptr<CallReservation> reservation,
                  std::function<bool()> cancelled)
      : cancelled_(std::move(cancelled)),
        task_id_(std::move(task_id)),
        call_(std::move(call)),
        token_(std::move(token)),
        inputs_(std::move(inputs)),
        reservation_(std::move(reservation)) {}

  bool HasProgressToken() const override { return false; }
  void ReportProgress(double, std::optional<double>, const std::string&) override {}
  void Log(LogLevel, const std::string&, const Json&) override {}
  std::stop_token Cancellation() const override { return token_; }
  std::string ProtocolVersion() const override { return call_->protocol_version; }
  std::string TraceParent() const override { return call_->traceparent; }
  Result<Json> SendRequest(const std::string& method, const Json&) override {
    return MakeError(ErrorCode::kUnsupported,
                     "a task cannot send " + method + "; it asks with input_required instead");
  }
  std::unique_ptr<CallReservation> TakeReservation() override { return std::move(reservation_); }
  bool Modern() const override { return call_->modern; }
  const Json& ClientCapabilities() const override { return call_->client_capabilities; }
  const InputResponses& Inputs() const override { return inputs_; }
  const Caller& caller() const override { return call_->caller; }
  std::string TaskId() const override { return task_id_; }
  Status TaskStillWanted() override {
    if (!token_.stop_requested() && !cancelled_()) return Status::Ok();
    return MakeError(ErrorCode::kCancelled, "task " + task_id_ + " was cancelled");
  }

 private:
  const std::function<bool()> cancelled_;
  const std::string task_id_;
  const std::shared_ptr<const TaskCall> call_;
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

// One task. `id`, `owner` and `stop` are set at creation (read without a lock); the rest is
// guarded by TaskRunner::mu_.
struct TaskRunner::Entry {
  std::string id;
  std::string owner;
  std::string tool;
  // The call, while the task is not terminal; a run holds its own reference. Dropped when the
  // task ends: its request (arguments, decoded inputs) is not kept.
  std::shared_ptr<const TaskCall> call;
  std::stop_source stop;
  TaskSnapshot snapshot;
  std::chrono::steady_clock::time_point ended;  // when it became terminal
  bool active = true;                           // counted in active_ (not terminal)
  Json asked = Json::object();                  // input requests still unanswered
  Json answered = Json::object();               // answers gathered so far
  std::optional<std::string> request_state;     // the handler's state between rounds
};

TaskRunner::TaskRunner(TaskOptions options)
    : options_(options), pool_(std::max<size_t>(options.max_running, 1)) {}

TaskRunner::~TaskRunner() {
  Shutdown("the server shut down before this task finished; nothing was committed");
  pool_.Shutdown();
}

void TaskRunner::EndLocked(Entry& entry, TaskState state, bool stop) {
  CountChangeLocked(entry.id);  // the caller notifies changed_
  entry.snapshot.state = state;
  entry.snapshot.updated_at = Now();
  entry.snapshot.input_requests.reset();
  entry.ended = std::chrono::steady_clock::now();
  if (entry.active) {
    entry.active = false;
    auto it = active_.find(entry.owner);
    if (it != active_.end() && --it->second == 0) active_.erase(it);
  }
  entry.call.reset();
  if (stop) entry.stop.request_stop();
}

Result<TaskSnapshot> TaskRunner::Start(TaskCall call) {
  const std::string owner = call.caller.owner;
  {
    MutexLock lock(mu_);
    if (stopping_) {
      return MakeError(ErrorCode::kUnavailable,
                       "the server is shutting down and starts no new tasks; retry after the "
                       "restart or on another replica");
    }
    ForgetExpired();
    size_t& mine = active_[owner];
    if (options_.max_per_owner > 0 && mine >= options_.max_per_owner) {
      return MakeError(ErrorCode::kResourceExhausted,
                       "too many tasks in flight for these credentials: " +
                           std::to_string(options_.max_per_owner) +
                           " (--max-tasks-per-owner); wait for one to finish or cancel one");
    }
    ++mine;  // counted now, so concurrent starts cannot pass the cap together
  }
  Result<TaskSnapshot> started = Create(owner, std::move(call));
  if (!started.ok()) {
    MutexLock lock(mu_);
    auto it = active_.find(owner);
    if (it != active_.end() && --it->second == 0) active_.erase(it);
  }
  return started;
}

Result<TaskSnapshot> TaskRunner::Create(const std::string& owner, TaskCall call) {
  auto entry = std::make_shared<Entry>();
  entry->owner = owner;
  entry->tool = call.tool;
  if (call.inputs.responses && call.inputs.responses->is_object()) {
    entry->answered = *call.inputs.responses;
  }
  entry->request_state = call.inputs.request_state;
  TaskOptions options = options_;
  if (call.ttl_ms) {
    options.ttl_ms =
        std::clamp(*call.ttl_ms, std::min(kMinTaskTtlMs, options_.ttl_ms), options_.ttl_ms);
  }
  TaskSnapshot& s = entry->snapshot;
  if (options.ledger != nullptr) {
    ASSIGN_OR_RETURN(s, options.ledger->Create(call.caller, call.tool, call.arguments, options));
  } else {
    s.task_id = RandomHex(16);
    s.created_at = s.updated_at = Now();
    s.ttl_ms = options.ttl_ms;
    s.poll_interval_ms = options.poll_interval_ms;
  }
  call.arguments = Json();  // the ledger keeps the request; the admitted call has what it needs
  entry->call = std::make_shared<const TaskCall>(std::move(call));
  entry->id = s.task_id;
  {
    MutexLock lock(mu_);
    tasks_.emplace(s.task_id, entry);
  }
  log::Info(kTasksLog, "task " + s.task_id + " created for " + entry->tool);
  if (options_.metrics != nullptr) options_.metrics->RecordTaskStatus(TaskStateName(s.state));
  TaskSnapshot first = s;  // before Submit: the run may change the entry at once
  Submit(entry);
  return first;
}

void TaskRunner::Submit(const std::shared_ptr<Entry>& entry) {
  {
    MutexLock lock(mu_);
    ++running_;
  }
  Status submitted = pool_.Submit([this, entry] {
    Run(entry);
    {
      MutexLock lock(mu_);
      --running_;
    }
    changed_.notify_all();
  });
  if (submitted.ok()) return;
  std::optional<Json> error;
  {
    MutexLock lock(mu_);
    --running_;
    if (Terminal(entry->snapshot.state)) return;
    entry->snapshot.error = error = ErrorJson(InternalError(submitted.error().message));
    EndLocked(*entry, TaskState::kFailed, /*stop=*/false);
  }
  const bool recorded = Record(entry, TaskState::kFailed, error);
  Changed(entry);
  if (recorded) ForgetRecorded(entry);
}

void TaskRunner::Changed(const std::shared_ptr<Entry>& entry) {
  TaskSnapshot now;
  {
    MutexLock lock(mu_);
    CountChangeLocked(entry->id);
    now = entry->snapshot;
  }
  changed_.notify_all();
  if (on_change_) on_change_(now);
}

void TaskRunner::ForgetRecorded(const std::shared_ptr<Entry>& entry) {
  if (options_.ledger == nullptr) return;  // memory is all there is: kept until the ttl
  {
    MutexLock lock(mu_);
    if (!Terminal(entry->snapshot.state)) return;
    auto it = tasks_.find(entry->id);
    if (it != tasks_.end() && it->second == entry) tasks_.erase(it);
    CountChangeLocked(entry->id);
  }
  changed_.notify_all();
}

bool TaskRunner::EndedInLedger(const Entry& entry) const {
  if (options_.ledger == nullptr) return false;
  auto row = options_.ledger->Get(entry.id, entry.owner);
  return row.ok() && *row && Terminal((*row)->state);
}

bool TaskRunner::Record(const std::shared_ptr<Entry>& entry, TaskState state,
                        const std::optional<Json>& payload) {
  auto counted = [&] {
    if (options_.metrics != nullptr) options_.metrics->RecordTaskStatus(TaskStateName(state));
  };
  if (options_.ledger == nullptr) {
    counted();
    return false;
  }
  auto recorded = options_.ledger->Set(entry->id, entry->owner, state, payload);
  if (recorded.ok()) {
    counted();
    return true;
  }
  log::Warn(kTasksLog, "task " + entry->id + ": " + recorded.error().message);
  if (recorded.error().code != ErrorCode::kFailedPrecondition) return false;  // kept here instead
  auto row = options_.ledger->Get(entry->id, entry->owner);
  if (!row.ok() || !*row) return false;
  MutexLock lock(mu_);
  const bool was_terminal = Terminal(entry->snapshot.state);
  entry->snapshot = **row;
  if (!Terminal(entry->snapshot.state)) return false;
  if (!was_terminal) EndLocked(*entry, entry->snapshot.state, /*stop=*/true);
  return true;
}

void TaskRunner::Run(const std::shared_ptr<Entry>& entry) {
  InputResponses inputs;
  std::shared_ptr<const TaskCall> call;
  {
    MutexLock lock(mu_);
    if (Terminal(entry->snapshot.state) || !entry->call) return;
    call = entry->call;
    if (!entry->answered.empty()) inputs.responses = entry->answered;
    inputs.request_state = entry->request_state;
  }
  ToolResult result;
  std::optional<Json> error;
  {
    TaskCallContext context(entry->id, call, entry->stop.get_token(), std::move(inputs),
                            std::move(call->call->reservation),
                            [this, entry] { return EndedInLedger(*entry); });
    try {
      result = call->call->run(context);
    } catch (const std::exception& e) {  // a protocol-level failure: the task fails
      log::Error(kTasksLog, "task of " + entry->tool + " threw: " + e.what());
      error = ErrorJson(InternalError(std::string("Internal error: ") + e.what()));
    }
  }
  TaskState state;
  std::optional<Json> payload;
  bool handed_off = false;
  {
    MutexLock lock(mu_);
    // Cancelled or stopped meanwhile: whatever it returned is dropped (its commit, if any, was
    // refused: session_store.h UpdateTask).
    if (Terminal(entry->snapshot.state)) return;
    if (!error && result.handed_off && options_.ledger != nullptr) {
      HandOffLocked(*entry, std::move(*result.handed_off));
      handed_off = true;
    } else {
      payload = Conclude(*entry, *call, std::move(result), std::move(error));
    }
    state = entry->snapshot.state;
  }
  if (handed_off) {
    log::Info(kTasksLog, "task " + entry->id + " handed off: " + entry->snapshot.status_message);
    changed_.notify_all();
    Changed(entry);
    return;
  }
  log::Info(kTasksLog, "task " + entry->id + " " + TaskStateName(state));
  const bool recorded = Record(entry, state, payload);
  Changed(entry);
  if (recorded) ForgetRecorded(entry);
}

std::optional<Json> TaskRunner::Conclude(Entry& entry, const TaskCall& call, ToolResult result,
                                         std::optional<Json> error) {
  TaskSnapshot& s = entry.snapshot;
  s.updated_at = Now();
  if (error) {
    s.error = error;
    EndLocked(entry, TaskState::kFailed, /*stop=*/false);
    return error;
  }
  if (result.handed_off) {  // no ledger to hand the task to: kept in memory, it would be lost
    result = ToolResult::ErrorText("Tool " + call.tool +
                                   " needs durable tasks to go on elsewhere, and this server keeps "
                                   "its tasks in memory only; nothing was sent or committed");
  }
  if (result.input_required && !call.modern) {
    s.result = ToolResultToJson(ToolResult::ErrorText(
        "Tool " + call.tool + " needs input from the client, which protocol " +
        call.protocol_version + " cannot ask for"));  // as a direct legacy call answers
    EndLocked(entry, TaskState::kCompleted, /*stop=*/false);
    return s.result;
  }
  if (result.input_required) {
    s.state = TaskState::kInputRequired;
    entry.asked = result.input_required->requests.is_object() ? result.input_required->requests
                                                              : Json::object();
    entry.request_state = result.input_required->state;
    s.input_requests = entry.asked;
    return std::nullopt;
  }
  s.result = ToolResultToJson(std::move(result));
  EndLocked(entry, TaskState::kCompleted, /*stop=*/false);
  return s.result;
}

void TaskRunner::HandOffLocked(Entry& entry, std::string message) {
  CountChangeLocked(entry.id);  // the caller notifies changed_
  entry.snapshot.status_message = std::move(message);
  entry.snapshot.updated_at = Now();
  if (entry.active) {
    entry.active = false;
    auto it = active_.find(entry.owner);
    if (it != active_.end() && --it->second == 0) active_.erase(it);
  }
  entry.call.reset();
  auto it = tasks_.find(entry.id);
  if (it != tasks_.end() && it->second.get() == &entry) tasks_.erase(it);
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
  bool here = false;
  return Read(task_id, owner, &here);
}

std::optional<TaskSnapshot> TaskRunner::Read(const std::string& task_id, const std::string& owner,
                                             bool* here) {
  {
    MutexLock lock(mu_);
    *here = false;
    if (auto entry = Find(task_id, owner)) {
      *here = true;
      return entry->snapshot;
    }
  }
  if (options_.ledger == nullptr) return std::nullopt;
  auto row = options_.ledger->Get(task_id, owner);
  if (!row.ok()) {
    log::Warn(kTasksLog, "task " + task_id + ": " + row.error().message);
    return std::nullopt;
  }
  return *row;
}

Result<CancelOutcome> TaskRunner::Cancel(const std::string& task_id, const std::string& owner) {
  std::shared_ptr<Entry> entry;
  {
    MutexLock lock(mu_);
    entry = Find(task_id, owner);
    if (entry && Terminal(entry->snapshot.state)) {
      return CancelOutcome{CancelOutcome::Kind::kEnded, entry->snapshot, ""};
    }
  }
  if (!entry) return CancelElsewhere(task_id, owner);
  ASSIGN_OR_RETURN(CancelOutcome outcome, EndUncommitted(entry, TaskState::kCancelled, std::nullopt,
                                                         /*await_completion=*/true));
  if (outcome.kind == CancelOutcome::Kind::kCancelled)
    log::Info(kTasksLog, "task " + task_id + " cancelled");
  return outcome;
}

Result<CancelOutcome> TaskRunner::EndUncommitted(const std::shared_ptr<Entry>& entry,
                                                 TaskState state, const std::optional<Json>& error,
                                                 bool await_completion) {
  CancelOutcome outcome;
  if (options_.ledger != nullptr) {
    auto ended = options_.ledger->EndUncommitted(entry->id, entry->owner, state, error);
    if (!ended.ok() && ended.error().code == ErrorCode::kConflict) {
      // Its commit came first: it completes. Wait (briefly) for the run to record that.
      MutexLock lock(mu_);
      if (await_completion) {
        changed_.wait_for(lock, kCommittedTaskWait, [&] {
          mu_.AssertHeld();
          return Terminal(entry->snapshot.state);
        });
      }
      return CancelOutcome{CancelOutcome::Kind::kTooLate, entry->snapshot, ended.error().message};
    }
    if (!ended.ok() && ended.error().code != ErrorCode::kFailedPrecondition) return ended.error();
    if (!ended.ok()) {  // ended already (elsewhere, or by its run): the ledger's end stands
      ASSIGN_OR_RETURN(std::optional<TaskSnapshot> row,
                       options_.ledger->Get(entry->id, entry->owner));
      MutexLock lock(mu_);
      if (row && Terminal(row->state) && !Terminal(entry->snapshot.state)) {
        entry->snapshot = *row;
        EndLocked(*entry, row->state, /*stop=*/true);
      }
      CancelOutcome ended_before{CancelOutcome::Kind::kEnded, row ? *row : entry->snapshot, ""};
      lock.unlock();
      changed_.notify_all();  // a WaitTerminal of this task sees it ended
      return ended_before;
    }
  }
  {
    MutexLock lock(mu_);
    if (Terminal(entry->snapshot.state)) {  // its run ended it meanwhile (nothing committed)
      return CancelOutcome{CancelOutcome::Kind::kEnded, entry->snapshot, ""};
    }
    entry->snapshot.error = error;
    EndLocked(*entry, state, /*stop=*/true);
    outcome.task = entry->snapshot;
  }
  if (options_.metrics != nullptr) options_.metrics->RecordTaskStatus(TaskStateName(state));
  Changed(entry);
  if (options_.ledger != nullptr) ForgetRecorded(entry);
  return outcome;
}

Result<CancelOutcome> TaskRunner::CancelElsewhere(const std::string& task_id,
                                                  const std::string& owner) const {
  if (options_.ledger == nullptr) return MakeError(ErrorCode::kNotFound, "unknown task " + task_id);
  ASSIGN_OR_RETURN(std::optional<TaskSnapshot> row, options_.ledger->Get(task_id, owner));
  if (!row) return MakeError(ErrorCode::kNotFound, "unknown task " + task_id);
  if (Terminal(row->state)) return CancelOutcome{CancelOutcome::Kind::kEnded, *row, ""};
  // Run by another process: the row says cancelled before that process's commit can claim it
  // (then its commit is refused and nothing is committed), or its commit came first.
  auto cancelled =
      options_.ledger->EndUncommitted(task_id, owner, TaskState::kCancelled, std::nullopt);
  if (cancelled.ok()) return CancelOutcome{CancelOutcome::Kind::kCancelled, *cancelled, ""};
  if (cancelled.error().code == ErrorCode::kConflict) {
    return CancelOutcome{CancelOutcome::Kind::kTooLate, *row, cancelled.error().message};
  }
  if (cancelled.error().code != ErrorCode::kFailedPrecondition) return cancelled.error();
  ASSIGN_OR_RETURN(row, options_.ledger->Get(task_id, owner));  // it ended meanwhile
  if (!row) return MakeError(ErrorCode::kNotFound, "unknown task " + task_id);
  return CancelOutcome{CancelOutcome::Kind::kEnded, *row, ""};
}

void TaskRunner::Shutdown(const std::string& reason) {
  std::vector<std::shared_ptr<Entry>> open;
  {
    MutexLock lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (const auto& [id, entry] : tasks_) {
      if (!Terminal(entry->snapshot.state)) open.push_back(entry);
    }
  }
  changed_.notify_all();
  const Json error = ErrorJson(InternalError(reason));
  for (const auto& entry : open) {
    auto ended = EndUncommitted(entry, TaskState::kFailed, error, /*await_completion=*/false);
    if (!ended.ok()) {
      log::Warn(kTasksLog, "task " + entry->id +
                               " could not be marked failed at shutdown: " + ended.error().message);
      entry->stop.request_stop();
    } else if (ended->kind == CancelOutcome::Kind::kCancelled) {
      log::Info(kTasksLog, "task " + entry->id + " failed: " + reason);
    }
  }
}

size_t TaskRunner::Running() const {
  MutexLock lock(mu_);
  return running_;
}

bool TaskRunner::WaitIdle(std::chrono::steady_clock::time_point deadline, std::stop_token stop) {
  MutexLock lock(mu_);
  return changed_.wait_until(lock, stop, deadline, [this] {
    mu_.AssertHeld();
    return running_ == 0;
  });
}

void TaskRunner::CountChangeLocked(const std::string& task_id) {
  if (auto it = waited_.find(task_id); it != waited_.end()) ++it->second.changes;
}

void TaskRunner::NoteChangedElsewhere(const std::string& task_id) {
  {
    MutexLock lock(mu_);
    CountChangeLocked(task_id);
  }
  changed_.notify_all();
}

Result<TaskSnapshot> TaskRunner::WaitTerminal(const std::string& task_id, const std::string& owner,
                                              std::stop_token stop) {
  {
    MutexLock lock(mu_);
    ++waited_[task_id].waiters;
  }
  Result<TaskSnapshot> ended = AwaitTerminal(task_id, owner, std::move(stop));
  MutexLock lock(mu_);
  auto it = waited_.find(task_id);
  if (--it->second.waiters == 0) waited_.erase(it);
  return ended;
}

Result<TaskSnapshot> TaskRunner::AwaitTerminal(const std::string& task_id, const std::string& owner,
                                               std::stop_token stop) {
  while (true) {
    uint64_t seen;
    {
      MutexLock lock(mu_);
      seen = waited_[task_id].changes;  // before the read: a change after it is counted
    }
    bool here = false;
    std::optional<TaskSnapshot> task = Read(task_id, owner, &here);
    if (!task) return MakeError(ErrorCode::kNotFound, "unknown task " + task_id);
    if (Terminal(task->state)) return *task;
    auto woken = [&] {
      mu_.AssertHeld();
      return stopping_ || waited_[task_id].changes != seen;
    };
    MutexLock lock(mu_);
    if (here) {
      changed_.wait(lock, stop, woken);  // every change of a task run here is counted
    } else {
      // Run by another process: its changes are counted when reported (TaskWatch, through the
      // server); the row is read again for what nothing reports — where nothing reports at all
      // (SQLite: another process on the data dir), every poll interval but at most once a
      // second; where changes are reported, seldom, for a report lost while the watch
      // reconnected or fell behind.
      const auto reread = options_.changes_elsewhere_reported
                              ? std::chrono::milliseconds(kReportedReRead)
                              : std::max<std::chrono::milliseconds>(
                                    std::chrono::milliseconds(task->poll_interval_ms), kMinReRead);
      changed_.wait_for(lock, stop, reread, woken);
    }
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
    MutexLock lock(mu_);
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
    MutexLock lock(mu_);
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
