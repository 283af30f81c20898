#include "session/postgres/pg_tasks.h"

#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "common/decimal.h"
#include "common/log.h"
#include "session/postgres/pg_schema.h"

namespace imgmcp::session::postgres {
namespace {

constexpr char kRunnerPrefix[] = "replica:";
// The origin of an imgmcp_tasks payload that every replica reports, its writer included: a row of
// a task another replica runs (cancelled or settled here), whose change this replica's callers
// did not make themselves. Never a store's origin_ (RandomHex).
constexpr char kAnyOrigin[] = "-";
constexpr const char* kColumns = kTaskColumns;
constexpr const char* kNotTerminal = kTaskNotTerminal;
// A row expired at the parameter that follows (TaskExpired, task_rules.h).
constexpr const char* kExpired = kTaskExpiredAtPrefix;

Result<std::vector<TaskRow>> ReadRows(const PgResult& r) {
  std::vector<TaskRow> out;
  for (int i = 0; i < r.Rows(); ++i) {
    TaskRow row;
    TaskRecord& t = row.record;
    t.task_id = r.Text(i, 0);
    t.owner = r.Text(i, 1);
    t.session_id = r.Text(i, 2);
    t.tool = r.Text(i, 3);
    t.request_json = r.Text(i, 4);
    const std::optional<TaskStatus> status = ParseTaskStatus(r.Text(i, 5));
    if (!status.has_value()) {
      return MakeError(ErrorCode::kDataLoss,
                       "task " + t.task_id + " has an unknown status \"" + r.Text(i, 5) + "\"");
    }
    t.status = *status;
    t.status_message = r.Text(i, 6);
    t.result_json = r.Text(i, 7);
    t.version = r.OptionalInt(i, 8);
    t.error_json = r.Text(i, 9);
    t.ttl_ms = r.Int(i, 10);
    t.poll_interval_ms = r.Int(i, 11);
    row.created_ms = r.Int(i, 12);
    row.updated_ms = r.Int(i, 13);
    t.runner = r.Text(i, 14);
    t.batch_model = r.Text(i, 15);
    t.batch_group = r.Text(i, 16);
    t.batch_job = r.Text(i, 17);
    RenderTaskTimes(row);
    out.push_back(std::move(row));
  }
  return out;
}

// kColumns, each prefixed with `alias` and a dot.
std::string QualifiedColumns(const std::string& alias) {
  std::string out;
  std::string_view rest = kColumns;
  while (!rest.empty()) {
    const size_t comma = rest.find(", ");
    out += (out.empty() ? "" : ", ") + alias + "." + std::string(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 2);
  }
  return out;
}

PgParam OptionalText(const std::optional<std::string>& value) {
  return value.has_value() ? PgParam::Text(*value) : PgParam::Null();
}

// The replica id of a runner of this store, or 0.
int64_t RunnerReplica(const std::string& runner) {
  const std::string prefix = kRunnerPrefix;
  if (runner.rfind(prefix, 0) != 0) return 0;
  const std::optional<int64_t> id = ParseDecimal<int64_t>(
      std::string_view(runner).substr(prefix.size()), kFirstReplicaId, 2147483647);
  return id.value_or(0);
}

}  // namespace

Result<std::string> PgTaskRows::RunnerId() {
  const int64_t id = turns_->replica_id();
  if (id == 0) {
    return MakeError(ErrorCode::kUnavailable, "the connection to PostgreSQL at " + pool_.label() +
                                                  " is being re-established; try again");
  }
  return kRunnerPrefix + std::to_string(id);
}

Result<bool> PgTaskRows::RunnerIsAlive(const std::string& runner) {
  const int64_t id = RunnerReplica(runner);
  if (id == 0) return false;  // not a runner of this store: nobody runs it
  if (id == turns_->replica_id()) return true;
  const std::string ns = std::to_string(kAdvisoryNamespace);
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  // Free (taken shared at once, and given back): the replica's listener connection is gone.
  ASSIGN_OR_RETURN(PgResult r,
                   conn->Exec("SELECT CASE WHEN pg_try_advisory_lock_shared(" + ns +
                                  ", $1::int) THEN pg_advisory_unlock_shared(" + ns +
                                  ", $1::int) AND false ELSE true END",
                              {PgParam::Int(id)}, "asking whether a replica still runs"));
  return r.Bool(0, 0);
}

// The dead replica's turn tickets go (as its watchers would remove them): a commit of it still in
// flight holds its ticket FOR SHARE, so this waits for it, and none can start afterwards.
Status PgTaskRows::ReleaseRunner(const std::string& runner) {
  const int64_t id = RunnerReplica(runner);
  if (id == 0) return Status::Ok();
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  ASSIGN_OR_RETURN(
      PgResult r,
      conn->Exec("WITH d AS (DELETE FROM imgmcp.turn_tickets WHERE replica_id = $1 RETURNING "
                 "session_id) SELECT s, pg_notify('imgmcp_turns', s) FROM (SELECT DISTINCT "
                 "session_id AS s FROM d) x",
                 {PgParam::Int(id)}, "releasing the turns of a replica that is gone"));
  if (r.Rows() > 0) {
    log::Info("postgres", "released the turns of replica " + std::to_string(id) + " in " +
                              std::to_string(r.Rows()) + " session line(s)");
  }
  return Status::Ok();
}

// A task is created once its call was admitted (mcp/task_runner.h), i.e. its turn reserved;
// the draw of that reservation is asynchronous (pg_turns.h), so the row waits for it: once the
// creation is answered, a task created next through any replica draws a later ticket, and tasks
// of one session commit in the order they were created.
Status PgTaskRows::Insert(const TaskRow& row) {
  turns_->WaitForDraws();
  const TaskRecord& t = row.record;
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  ASSIGN_OR_RETURN(
      PgResult r,
      conn->Exec(
          std::string("WITH i AS (INSERT INTO imgmcp.tasks(") + kColumns +
              ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $17, "
              "$18, $19) RETURNING task_id, status, owner) SELECT pg_notify('imgmcp_tasks', $16 "
              "|| ' ' || "
              "task_id || ' ' || status || ' ' || owner) FROM i",
          {PgParam::Text(t.task_id), PgParam::Text(t.owner), PgParam::Text(t.session_id),
           PgParam::Text(t.tool), PgParam::Text(t.request_json),
           PgParam::Text(std::string(TaskStatusName(t.status))), PgParam::Text(t.status_message),
           PgParam::Text(t.result_json), PgParam::OptionalInt(t.version),
           PgParam::Text(t.error_json), PgParam::Int(t.ttl_ms), PgParam::Int(t.poll_interval_ms),
           PgParam::Int(row.created_ms), PgParam::Int(row.updated_ms), PgParam::Text(t.runner),
           PgParam::Text(origin_), PgParam::Text(t.batch_model), PgParam::Text(t.batch_group),
           PgParam::Text(t.batch_job)},
          "creating a task"));
  return Status::Ok();
}

Result<std::optional<TaskRow>> PgTaskRows::Load(const std::string& task_id) {
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  ASSIGN_OR_RETURN(PgResult r, conn->Exec(std::string("SELECT ") + kColumns +
                                              " FROM imgmcp.tasks WHERE task_id = $1",
                                          {PgParam::Text(task_id)}, "reading a task"));
  ASSIGN_OR_RETURN(std::vector<TaskRow> rows, ReadRows(r));
  if (rows.empty()) return std::optional<TaskRow>();
  return std::optional<TaskRow>(std::move(rows.front()));
}

Result<std::optional<TaskRow>> PgTaskRows::Update(const TaskUpdate& update, int64_t now_ms,
                                                  bool* applied) {
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  ASSIGN_OR_RETURN(
      PgResult r,
      conn->Exec(std::string("WITH u AS (UPDATE imgmcp.tasks SET status = $1, status_message = "
                             "coalesce($2, status_message), result_json = coalesce($3, "
                             "result_json), version = coalesce($4::bigint, version), error_json = "
                             "coalesce($5, error_json), updated_ms = $6 WHERE task_id = $7 AND "
                             "owner = $8 AND (NOT $11::boolean OR version IS NULL) AND ") +
                     kNotTerminal + " RETURNING " + kColumns + ") SELECT " + kColumns +
                     ", pg_notify('imgmcp_tasks', CASE WHEN runner = $10 THEN $9 ELSE '" +
                     kAnyOrigin +
                     "' END || ' ' || task_id || ' ' || status || ' ' || owner) FROM u",
                 {PgParam::Text(std::string(TaskStatusName(update.status))),
                  OptionalText(update.status_message), OptionalText(update.result_json),
                  PgParam::OptionalInt(update.version), OptionalText(update.error_json),
                  PgParam::Int(now_ms), PgParam::Text(update.task_id), PgParam::Text(update.owner),
                  PgParam::Text(origin_),
                  PgParam::Text(kRunnerPrefix + std::to_string(turns_->replica_id())),
                  PgParam::Text(update.unless_committed ? "true" : "false")},
                 "updating a task"));
  ASSIGN_OR_RETURN(std::vector<TaskRow> rows, ReadRows(r));
  *applied = !rows.empty();
  if (*applied) return std::optional<TaskRow>(std::move(rows.front()));
  ASSIGN_OR_RETURN(std::optional<TaskRow> row, Load(update.task_id));
  if (row.has_value() && row->record.owner != update.owner) row.reset();
  return row;
}

// The row lock this takes orders the commit against a concurrent cancel (Update with
// unless_committed): whichever writes the row first decides, and the other sees its outcome.
Status ClaimTaskForCommit(PgConnection& conn, const std::string& task_id, int64_t version) {
  ASSIGN_OR_RETURN(PgResult r, conn.Exec(std::string("UPDATE imgmcp.tasks SET version = $1 WHERE "
                                                     "task_id = $2 AND version IS NULL AND ") +
                                             kNotTerminal + " RETURNING 1",
                                         {PgParam::Int(version), PgParam::Text(task_id)},
                                         "claiming the task of a commit"));
  if (r.Rows() == 0) return TaskEndedBeforeCommitError(task_id);
  return Status::Ok();
}

Result<std::vector<TaskRow>> PgTaskRows::List(const std::string& owner,
                                              const std::optional<After>& after, int limit,
                                              int64_t now_ms) {
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  ASSIGN_OR_RETURN(
      PgResult r,
      conn->Exec(std::string("SELECT ") + kColumns + " FROM imgmcp.tasks WHERE owner = $1 AND " +
                     "NOT " + kExpired + "$2) AND ($3::bigint IS NULL OR (created_ms, task_id) " +
                     "< ($3::bigint, $4::text)) ORDER BY created_ms DESC, task_id DESC LIMIT $5",
                 {PgParam::Text(owner), PgParam::Int(now_ms),
                  after.has_value() ? PgParam::Int(after->created_ms) : PgParam::Null(),
                  after.has_value() ? PgParam::Text(after->task_id) : PgParam::Null(),
                  PgParam::Int(limit)},
                 "listing tasks"));
  return ReadRows(r);
}

Result<std::vector<TaskRow>> PgTaskRows::LoadOthersUnsettled(const std::string& runner) {
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  ASSIGN_OR_RETURN(PgResult r,
                   conn->Exec(std::string("SELECT ") + kColumns + " FROM imgmcp.tasks WHERE " +
                                  kNotTerminal + " AND runner <> $1",
                              {PgParam::Text(runner)}, "reading unfinished tasks"));
  return ReadRows(r);
}

Result<int64_t> PgTaskRows::DeleteExpired(int64_t now_ms) {
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  // One replica at a time: the one that gets the sweep's lock for this statement deletes; the
  // others find it taken and leave the rows to it.
  ASSIGN_OR_RETURN(
      PgResult r,
      conn->Exec(std::string("DELETE FROM imgmcp.tasks WHERE (SELECT pg_try_advisory_xact_lock(") +
                     std::to_string(kAdvisoryNamespace) + ", " + std::to_string(kTaskSweepLockKey) +
                     ")) AND " + kExpired + "$1) RETURNING task_id",
                 {PgParam::Int(now_ms)}, "removing expired tasks"));
  return static_cast<int64_t>(r.Rows());
}

// SKIP LOCKED: a row another poller is grouping right now is left to it, and the outer condition
// keeps a row grouped meanwhile out. The pick is a materialised CTE: as `IN (SELECT … LIMIT)` the
// planner may run the subquery more than once and take more rows than the limit.
Result<std::vector<TaskRow>> PgTaskRows::GroupBatch(const std::string& batch_model,
                                                    const std::string& group, int limit,
                                                    int64_t created_before_ms) {
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  ASSIGN_OR_RETURN(
      PgResult r,
      conn->Exec(std::string("WITH picked AS MATERIALIZED (SELECT task_id FROM imgmcp.tasks "
                             "WHERE batch_model = $1 AND batch_group = '' AND status = 'working' "
                             "AND created_ms <= $3 ORDER BY created_ms, task_id LIMIT $4 FOR "
                             "UPDATE SKIP LOCKED) UPDATE imgmcp.tasks t SET batch_group = $2 FROM "
                             "picked WHERE t.task_id = picked.task_id AND t.batch_group = '' "
                             "RETURNING ") +
                     QualifiedColumns("t"),
                 {PgParam::Text(batch_model), PgParam::Text(group), PgParam::Int(created_before_ms),
                  PgParam::Int(limit)},
                 "grouping batch tasks"));
  return ReadRows(r);
}

Result<int64_t> PgTaskRows::SetBatchJob(const std::string& group, const std::string& job) {
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  ASSIGN_OR_RETURN(PgResult r,
                   conn->Exec("UPDATE imgmcp.tasks SET batch_job = $2 WHERE "
                              "batch_group = $1 AND batch_job = '' RETURNING 1",
                              {PgParam::Text(group), PgParam::Text(job)}, "recording a batch job"));
  return static_cast<int64_t>(r.Rows());
}

Result<bool> PgTaskRows::UngroupBatchTask(const std::string& group, const std::string& task_id) {
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  ASSIGN_OR_RETURN(PgResult r, conn->Exec("UPDATE imgmcp.tasks SET batch_group = '' WHERE "
                                          "task_id = $2 AND batch_group = $1 AND batch_job = '' "
                                          "RETURNING 1",
                                          {PgParam::Text(group), PgParam::Text(task_id)},
                                          "taking a task out of its batch group"));
  return r.Rows() > 0;
}

Result<std::vector<TaskRow>> PgTaskRows::LoadOpenBatch() {
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
  ASSIGN_OR_RETURN(PgResult r, conn->Exec(std::string("SELECT ") + kColumns +
                                              " FROM imgmcp.tasks WHERE " + kNotTerminal +
                                              " AND batch_model <> '' ORDER BY created_ms, task_id",
                                          {}, "reading open batch tasks"));
  return ReadRows(r);
}

namespace {

class PgBatchPollLock final : public BatchPollLock {
 public:
  explicit PgBatchPollLock(std::unique_ptr<PgConnection> conn) : conn_(std::move(conn)) {}
  // Asks the server: a connection that broke took the lock with it.
  bool Held() override {
    return !conn_->Broken() && conn_->Exec("SELECT 1", {}, "checking the batch poll lock").ok();
  }

 private:
  std::unique_ptr<PgConnection> conn_;  // closing it releases the lock
};

}  // namespace

Result<std::unique_ptr<BatchPollLock>> PgTaskRows::TryTakeBatchPollLock() {
  ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn,
                   PgConnection::Connect(pool_.conninfo(), pool_.label()));
  ASSIGN_OR_RETURN(PgResult r,
                   conn->Exec("SELECT pg_try_advisory_lock($1::int, $2::int)",
                              {PgParam::Int(kAdvisoryNamespace), PgParam::Int(kBatchPollLockKey)},
                              "taking the batch poll lock"));
  if (!r.Bool(0, 0)) return std::unique_ptr<BatchPollLock>();
  return std::unique_ptr<BatchPollLock>(new PgBatchPollLock(std::move(conn)));
}

void PgTaskRows::SetListener(TaskListener listener) {
  MutexLock lock(listener_mu_);
  listener_ = std::move(listener);
}

void PgTaskRows::OnNotification(const std::string& payload) {
  std::istringstream in(payload);
  std::string origin, status;
  TaskChange change;
  if (!(in >> origin >> change.task_id >> status) || !IsValidTaskId(change.task_id) ||
      !ParseTaskStatus(status).has_value()) {
    log::Warn("postgres", "ignoring a malformed imgmcp_tasks notification");
    return;
  }
  // The rest after one space, whatever it holds; absent: "" (no credentials, or a replica from
  // before owners were announced).
  std::getline(in, change.owner);
  if (!change.owner.empty() && change.owner.front() == ' ') change.owner.erase(0, 1);
  if (origin == origin_) return;  // written through this store by its runner: its callers know
  change.status = *ParseTaskStatus(status);
  MutexLock lock(listener_mu_);
  if (listener_) listener_(change);
}

}  // namespace imgmcp::session::postgres
