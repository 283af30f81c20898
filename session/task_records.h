// Tasks as the session store keeps them (docs/design.md §3 "Tasks"): one row per task in the same
// store as the versions (SQLite or PostgreSQL), so a task outlives the request, the connection
// and the process that created it, and any replica answers for it.
//
// The store keeps rows and enforces their rules (ids, owners, transitions, expiry, orphans); what
// a task runs and how its result is shown to a client belong to the layers above. A task that
// commits a version commits it with the idempotency key TaskIdempotencyKey(task_id), so the
// version and the task's completion can never disagree: a task whose runner died is completed
// from that version if it exists, and failed only if it does not (nothing is committed twice).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace imgmcp::session {

// The five states of the MCP Tasks extension; the last three are terminal (never left).
enum class TaskStatus { kWorking, kInputRequired, kCompleted, kFailed, kCancelled };

// "working", "input_required", "completed", "failed", "cancelled".
std::string_view TaskStatusName(TaskStatus status);
std::optional<TaskStatus> ParseTaskStatus(std::string_view name);
bool IsTerminal(TaskStatus status);

// Task ids: 32 lowercase hex characters (128 random bits from the kernel's CSPRNG).
bool IsValidTaskId(std::string_view task_id);

// The idempotency key a task's commit records: "task:" + task id.
std::string TaskIdempotencyKey(std::string_view task_id);
// The task id of a key TaskIdempotencyKey made; "" for any other key.
std::string TaskIdOfKey(std::string_view key);

// The runner of a batch task (TaskRecord::batch_model set): no process or replica runs it, the
// store's batch poller (whoever holds the store's poll lock) does, so it is never settled as an
// orphan; it ends when its batch job's answer is committed or the job fails.
inline constexpr char kBatchRunner[] = "batch";

// What CreateTask is given.
struct NewTask {
  // The caller's auth scope: an opaque digest of its credentials (e.g. SHA-256 of the bearer
  // token), "" without one. Every read, update and listing is limited to the creator's owner.
  std::string owner;
  std::string session_id;    // the session the call works on ("" when it names none)
  std::string tool;          // e.g. "edit_image"
  std::string request_json;  // the call as received (tools/call params), kept for the runner
  int64_t ttl_ms = 0;  // the row is removed this long after the task became terminal (0: never)
  int64_t poll_interval_ms = 1000;
  std::string status_message;
  // Set: a batch task of this model (delivery "batch"), run by kBatchRunner; it waits for its
  // batch window until a poller groups it (BatchTasks, batch_tasks.h). "": an immediate task.
  std::string batch_model;
};

struct TaskRecord {
  std::string task_id;
  std::string owner;
  std::string session_id;
  std::string tool;
  std::string request_json;
  TaskStatus status = TaskStatus::kWorking;
  std::string status_message;
  // Terminal states: completed → the CallToolResult as JSON text (isError results included), and
  // the committed version when the task made one; failed → the JSON-RPC error object as JSON
  // text. Empty otherwise. `version` is also set, while the task is still working, by the
  // transaction that commits its version (the commit claims the row): from then on neither a
  // cancel nor a shutdown can end it any other way than completed.
  std::string result_json;
  std::optional<int64_t> version;
  std::string error_json;
  int64_t ttl_ms = 0;
  int64_t poll_interval_ms = 1000;
  std::string created_at;  // RFC 3339 UTC with milliseconds
  std::string updated_at;
  std::string runner;  // which process or replica runs it (the store's own id when created)
  // A batch task's model, its group (the batch it was put in: "" while it waits for its window)
  // and that group's Gemini job ("" until the job was created). All "" for an immediate task.
  std::string batch_model;
  std::string batch_group;
  std::string batch_job;
};

// A transition asked of UpdateTask. Only a task that is not terminal changes; the fields given
// replace the row's.
struct TaskUpdate {
  std::string task_id;
  std::string owner;
  TaskStatus status = TaskStatus::kWorking;
  std::optional<std::string> status_message;
  std::optional<std::string> result_json;  // with kCompleted
  std::optional<int64_t> version;          // with kCompleted
  std::optional<std::string> error_json;   // with kFailed
  // A cancel, or a shutdown that fails the task: applies only while the task's commit has not
  // claimed the row (TaskRecord::version still unset). Once the commit has claimed it the task
  // completes with that version, and UpdateTask answers kConflict naming it.
  bool unless_committed = false;
};

struct TaskPage {
  std::vector<TaskRecord> tasks;  // newest first
  std::optional<std::string> next_cursor;
};

}  // namespace imgmcp::session
