// BatchPoller: the store's batch poller (docs/design.md §3 "Tasks", "Batch tasks"). One round
// (RunOnce) does what the holder of the store's batch poll lock does: groups the batch tasks whose
// window has passed (one group per Gemini batch job, at most max_per_job tasks), creates each
// group's job — or, for a group a predecessor grouped but never recorded a job for, first looks
// the job up by the group's name, so nothing is created twice — reads the jobs that are due
// (gemini_client/batch_poll.h: doubling intervals), and hands each task of a job that ended to
// BatchTaskWork: its answer (found under the task's id), or an error naming why there is none.
// A job whose every task was cancelled is cancelled upstream (batches/{id}:cancel) by the poller
// that follows it. A round of a poller that does not hold the lock does nothing; a round tries to
// take it.
// Not thread-safe: one thread runs the rounds.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "gemini_client/batch_client.h"
#include "session/batch_tasks.h"

namespace imgmcp::app {

// What a batch task's tool does around its job: the request it sends, and what becomes of it.
class BatchTaskWork {
 public:
  virtual ~BatchTaskWork() = default;
  // The generateContent body of the task's call; an error fails the task at once (Finish with it).
  virtual Result<std::string> RequestBody(const session::TaskRecord& task) = 0;
  // The task's job ended: `answer` is its answer (an image or the request's own error, as
  // ParseGenerateResponse reads it), or why it has none. The task ends here (committed and
  // completed, or failed); nothing is committed for an error.
  virtual void Finish(const session::TaskRecord& task,
                      const Result<gemini::BatchAnswer>& answer) = 0;
  // Where the task is now, for its status message ("in Gemini batch batches/…: running"): said
  // when its job is created and when the job's state changes. The task stays working.
  virtual void Progress(const session::TaskRecord& task, const std::string& message) = 0;
};

struct BatchPollerOptions {
  std::chrono::milliseconds window{10'000};      // --batch-window
  int max_per_job = 100;                         // --batch-max
  std::chrono::milliseconds first_poll{30'000};  // --batch-poll
  // A job's body at most (the API's inline limit): the calls of a group beyond it wait for the
  // next job.
  size_t max_job_bytes = gemini::kMaxInlineBatchBytes;
};

class BatchPoller {
 public:
  // `tasks`, `client` and `work` must outlive the poller.
  BatchPoller(session::BatchTasks tasks, gemini::BatchClient& client, BatchTaskWork& work,
              const imgmcp::Clock& clock, BatchPollerOptions options);

  // One round; an error is what stopped it (the next round tries again).
  Status RunOnce(std::stop_token stop);
  // Whether the last round held the lock.
  bool leading() const { return lock_ != nullptr; }

 private:
  struct Group {
    std::string model, job;
    std::vector<session::TaskRecord> tasks;
  };
  struct JobSchedule {
    int64_t next_read_ms = 0;
    int reads = 0;
    gemini::BatchState state = gemini::BatchState::kPending;  // as last read
  };

  // Takes (or checks) the lock; false when another holder has it.
  Result<bool> Lead();
  // Groups every model's waiting tasks; remembers the new groups as this poller's own.
  Status GroupWaiting(const std::vector<session::TaskRecord>& open);
  // Creates the group's job (after looking it up, for a group that is not this poller's own).
  Status Submit(const std::string& group, const Group& members, std::stop_token stop);
  // Reads the group's job when due; hands its tasks on when it ended.
  Status Poll(const std::string& group, const Group& members, std::stop_token stop);
  // Keeps in `requests` (and `sent`) what fits one job; gives the rest of the group back to the
  // waiting calls (they make the next job).
  Status FitOneJob(const std::string& group, std::vector<gemini::BatchRequest>& requests,
                   Group& sent);
  void FailAll(const Group& members, const Error& error);
  // Tells each task of the group where its job is (BatchTaskWork::Progress).
  void TellAll(const Group& members, gemini::BatchState state);
  // Cancels upstream each job this poller follows that has no open task left (every one was
  // cancelled), and stops following it.
  void CancelAbandoned(const std::map<std::string, Group>& groups, std::stop_token stop);
  void Schedule(const std::string& job, int reads, gemini::BatchState state);

  session::BatchTasks tasks_;
  gemini::BatchClient& client_;
  BatchTaskWork& work_;
  const imgmcp::Clock& clock_;  // imgmcp::, not a file-local alias of the unity batch
  const BatchPollerOptions options_;
  std::unique_ptr<session::BatchPollLock> lock_;
  std::set<std::string> own_groups_;             // grouped by this poller, job not created yet
  std::map<std::string, JobSchedule> schedule_;  // by job name
  std::mt19937_64 jitter_;
};

}  // namespace imgmcp::app
