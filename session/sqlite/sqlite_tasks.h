// The SQL of the embedded store's tasks (table tasks, session/sqlite/schema.h v5) on one SqliteDb. No
// rules: ChainStore (chain_tasks.cpp) decides what is asked; SqliteSessionStore runs writes in its
// write transactions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "session/sqlite/sqlite_db.h"
#include "session/task_rules.h"

namespace imgmcp::session::sqlite::tasks {

Status InsertTask(SqliteDb& db, const TaskRow& row);
Result<std::optional<TaskRow>> LoadTask(SqliteDb& db, const std::string& task_id);
// One statement: the update applies only to the owner's row that is not terminal. The row as it
// is afterwards (nullopt: no row of this owner); *applied says whether it changed.
Result<std::optional<TaskRow>> UpdateTask(SqliteDb& db, const TaskUpdate& update, int64_t now_ms,
                                          bool* applied);
// Claims the task's row for a commit (CommitPlan::claims_task): sets its version while it is not
// terminal and has none. TaskEndedBeforeCommitError when there is no such row. Run inside the
// commit's write transaction.
Status ClaimForCommit(SqliteDb& db, const std::string& task_id, int64_t version);
// Empties the request and result kept in the rows of `session_id`'s tasks (a reset: what the
// tasks said of the session's images goes with them). Statuses and versions stay.
Status ForgetSessionPayloads(SqliteDb& db, const std::string& session_id);
// The owner's rows not expired at now_ms, newest first, after (after_ms, after_id) when given.
Result<std::vector<TaskRow>> ListTasks(SqliteDb& db, const std::string& owner,
                                       std::optional<std::pair<int64_t, std::string>> after,
                                       int limit, int64_t now_ms);
// Rows that are not terminal, of runners other than `runner`.
Result<std::vector<TaskRow>> LoadOthersUnsettled(SqliteDb& db, const std::string& runner);
// Deletes the rows expired at now_ms; returns how many.
Result<int64_t> DeleteExpired(SqliteDb& db, int64_t now_ms);

}  // namespace imgmcp::session::sqlite::tasks
