// Rules every SessionStore applies to tasks the same way (task_records.h): what CreateTask and
// UpdateTask accept, when a row has expired, the ListTasks cursor, and what a task whose runner
// died is settled as.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "session/task_records.h"

namespace imgmcp::session {

// The SQL both stores' task tables share (the same columns and rules in SQLite and PostgreSQL).
inline constexpr char kTaskColumns[] =
    "task_id, owner, session_id, tool, request_json, status, status_message, result_json, "
    "version, error_json, ttl_ms, poll_interval_ms, created_ms, updated_ms, runner, batch_model, "
    "batch_group, batch_job";
inline constexpr char kTaskNotTerminal[] = "status IN ('working', 'input_required')";
// "A terminal row whose ttl has passed at <time>": the caller appends the time (a parameter) and
// the closing parenthesis (TaskExpired is the same rule in C++).
inline constexpr char kTaskExpiredAtPrefix[] =
    "(status IN ('completed', 'failed', 'cancelled') AND ttl_ms > 0 AND updated_ms + ttl_ms <= ";

// A task row as the stores keep it: the record with its times in milliseconds since the epoch
// (the record's created_at/updated_at are rendered from them).
struct TaskRow {
  TaskRecord record;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
};

// kInvalidArgument naming the field: a session id that is neither "" nor valid, an empty tool,
// a negative ttl or poll interval, a batch model that is not IsBatchName.
Status ValidateNewTask(const NewTask& task);
// A batch model, group or job name as the task rows keep it: 1-128 of A-Z a-z 0-9 . _ - /.
bool IsBatchName(std::string_view name);
// kInvalidArgument naming what is wrong: completed without result_json or version, failed
// without error_json, a result or error with a status that does not take it.
Status ValidateTaskUpdate(const TaskUpdate& update);

// A terminal row whose ttl (> 0) has passed since it became terminal (updated_ms). A ttl of 0
// never expires; a task that is not terminal never expires.
bool TaskExpired(const TaskRow& row, int64_t now_ms);

// Fills record.created_at / updated_at from the row's milliseconds.
void RenderTaskTimes(TaskRow& row);

// ListTasks paging: the cursor after a task created at `created_ms` with `task_id`.
std::string EncodeTaskCursor(int64_t created_ms, const std::string& task_id);
// False for anything EncodeTaskCursor did not produce.
bool DecodeTaskCursor(const std::string& cursor, int64_t* created_ms, std::string* task_id);

// The JSON-RPC error object (as JSON text) of a task whose runner stopped before it finished and
// committed nothing; `runner_kind` is "process" or "replica".
std::string RunnerStoppedErrorJson(std::string_view runner_kind);
// kFailedPrecondition for an update of a task that is already `status`.
Error TaskAlreadyTerminalError(const std::string& task_id, TaskStatus status);
// kConflict for a cancel or shutdown of a task whose commit already claimed its row (it completes
// with `version`).
Error TaskAlreadyCommittedError(const std::string& task_id, int64_t version);
// kCancelled for a commit whose task was ended (cancelled, or failed by a shutdown) before the
// commit could claim its row: nothing was committed.
Error TaskEndedBeforeCommitError(const std::string& task_id);
// kNotFound for a task that is unknown, expired or another owner's (indistinguishable).
Error UnknownTaskError(const std::string& task_id);

}  // namespace imgmcp::session
