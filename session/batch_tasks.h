// BatchTasks: the rows of batch tasks (delivery "batch", task_records.h NewTask::batch_model) as
// the store's batch poller works them. A batch task is created like any task, run by
// kBatchRunner; the poller then, for each model, puts the tasks whose batch window has passed
// into a group (one Gemini batch job), records the job's name on them once it was created, and
// finally ends each task with its answer. Each step is one statement on the rows, so a poller that
// dies between two steps leaves rows the next poller resumes from: a grouped task without a job
// name (look the job up by the group's name before creating it again), a task with a job (read
// the job). Thread-safe (TaskRows is).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "session/chain_tasks.h"
#include "session/task_records.h"

namespace imgmcp::session {

class BatchTasks {
 public:
  BatchTasks(TaskRows& rows, const Clock& clock) : rows_(rows), clock_(clock) {}

  // Puts up to `limit` (1-1000) batch tasks of `model` that still wait for their window (working,
  // no group) and were created at least `window_ms` ago into `group`, oldest first; returns them.
  // Two pollers never get the same task. kInvalidArgument for a model or group that is not
  // IsBatchName.
  Result<std::vector<TaskRecord>> Group(const std::string& model, const std::string& group,
                                        int limit, int64_t window_ms);
  // Records `job` (the Gemini batch job's name) on the tasks of `group` that have none; how many.
  Result<int64_t> SetJob(const std::string& group, const std::string& job);
  // Gives a task of `group` back to the waiting ones while the group has no job (it did not fit
  // the group's job: the next round groups it first, its window long passed). Whether it did.
  Result<bool> Ungroup(const std::string& group, const std::string& task_id);
  // Every batch task that is not terminal, oldest first: waiting, grouped, submitted.
  Result<std::vector<TaskRecord>> Open();
  // The store's batch poll lock (chain_tasks.h BatchPollLock), or nullptr while someone else
  // holds it: only its holder groups, submits and polls.
  Result<std::unique_ptr<BatchPollLock>> TryLead() { return rows_.TryTakeBatchPollLock(); }

 private:
  TaskRows& rows_;
  const Clock& clock_;
};

}  // namespace imgmcp::session
