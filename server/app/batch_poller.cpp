#include "server/app/batch_poller.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "common/log.h"
#include "common/random.h"
#include "gemini_client/batch_poll.h"

namespace imgmcp::app {
namespace {

constexpr char kPollerLog[] = "batch";

// Worth another try at the next round: the service or the network, not the request.
bool Transient(const Error& error) {
  return error.code == ErrorCode::kUnavailable || error.code == ErrorCode::kDeadlineExceeded ||
         error.code == ErrorCode::kCancelled || error.code == ErrorCode::kInternal;
}

}  // namespace

BatchPoller::BatchPoller(session::BatchTasks tasks, gemini::BatchClient& client,
                         BatchTaskWork& work, const imgmcp::Clock& clock,
                         BatchPollerOptions options)
    : tasks_(tasks),
      client_(client),
      work_(work),
      clock_(clock),
      options_(options),
      jitter_(std::random_device{}()) {}

Result<bool> BatchPoller::Lead() {
  if (lock_ != nullptr && !lock_->Held()) {
    log::Warn(kPollerLog, "lost the batch poll lock; taking it again");
    lock_.reset();
  }
  if (lock_ == nullptr) {
    ASSIGN_OR_RETURN(lock_, tasks_.TryLead());
    if (lock_ == nullptr) return false;
    // A predecessor's schedule is unknown: every open job is read at once.
    schedule_.clear();
    own_groups_.clear();
  }
  return true;
}

Status BatchPoller::RunOnce(std::stop_token stop) {
  ASSIGN_OR_RETURN(bool leading, Lead());
  if (!leading) return Status::Ok();
  ASSIGN_OR_RETURN(std::vector<session::TaskRecord> open, tasks_.Open());
  RETURN_IF_ERROR(GroupWaiting(open));
  ASSIGN_OR_RETURN(open, tasks_.Open());
  std::map<std::string, Group> groups;
  for (session::TaskRecord& task : open) {
    if (task.batch_group.empty()) continue;  // its window has not passed
    Group& g = groups[task.batch_group];
    g.model = task.batch_model;
    if (!task.batch_job.empty()) g.job = task.batch_job;
    g.tasks.push_back(std::move(task));
  }
  CancelAbandoned(groups, stop);
  for (auto& [name, group] : groups) {
    if (stop.stop_requested()) break;
    Status done = group.job.empty() ? Submit(name, group, stop) : Poll(name, group, stop);
    if (!done.ok()) log::Warn(kPollerLog, "batch " + name + ": " + done.error().message);
  }
  return Status::Ok();
}

Status BatchPoller::GroupWaiting(const std::vector<session::TaskRecord>& open) {
  std::set<std::string> models;
  for (const session::TaskRecord& task : open) {
    if (task.batch_group.empty()) models.insert(task.batch_model);
  }
  for (const std::string& model : models) {
    while (true) {
      // A window opens with the oldest call waiting: once it has passed, that call and every one
      // that came after it (up to the job's limit) go into one job.
      const std::string group = "imgmcp-" + RandomHex(12);
      ASSIGN_OR_RETURN(std::vector<session::TaskRecord> grouped,
                       tasks_.Group(model, group, options_.max_per_job, options_.window.count()));
      if (grouped.empty()) break;
      own_groups_.insert(group);
      const int room = options_.max_per_job - static_cast<int>(grouped.size());
      if (room > 0) RETURN_IF_ERROR(tasks_.Group(model, group, room, 0));
    }
  }
  return Status::Ok();
}

Status BatchPoller::Submit(const std::string& group, const Group& members, std::stop_token stop) {
  if (own_groups_.count(group) == 0) {
    // Grouped by a predecessor (or by this poller before a failed create): the job may exist.
    ASSIGN_OR_RETURN(std::optional<gemini::BatchJob> found, client_.FindByDisplayName(group, stop));
    if (found.has_value()) {
      ASSIGN_OR_RETURN(int64_t recorded, tasks_.SetJob(group, found->name));
      log::Info(kPollerLog, "batch " + group + " was created before as " + found->name + " (" +
                                std::to_string(recorded) + " task(s))");
      return Status::Ok();
    }
  }
  std::vector<gemini::BatchRequest> requests;
  Group sent{members.model, "", {}};
  for (const session::TaskRecord& task : members.tasks) {
    Result<std::string> body = work_.RequestBody(task);
    if (body.ok() &&
        body->size() + gemini::kBatchEnvelopeBytes + gemini::kBatchRequestOverheadBytes >
            options_.max_job_bytes) {
      body = MakeError(ErrorCode::kInvalidArgument,
                       "the request (" + std::to_string(body->size()) +
                           " bytes) is larger than a batch job may be; use delivery \"now\"");
    }
    if (!body.ok()) {
      work_.Finish(task, body.error());
      continue;
    }
    requests.push_back({task.task_id, std::move(*body)});
    sent.tasks.push_back(task);
  }
  RETURN_IF_ERROR(FitOneJob(group, requests, sent));
  own_groups_.erase(group);  // from here on, a retry looks the job up first
  if (requests.empty()) return Status::Ok();
  Result<gemini::BatchJob> job = client_.Submit(members.model, group, requests, stop);
  if (!job.ok()) {
    if (!Transient(job.error())) FailAll(members, job.error());
    return job.error();
  }
  ASSIGN_OR_RETURN(int64_t recorded, tasks_.SetJob(group, job->name));
  log::Info(kPollerLog, "batch " + group + " created as " + job->name + " with " +
                            std::to_string(recorded) + " request(s)");
  Schedule(job->name, 0, job->state);
  sent.job = job->name;
  TellAll(sent, job->state);
  return Status::Ok();
}

Status BatchPoller::Poll(const std::string& group, const Group& members, std::stop_token stop) {
  auto it = schedule_.find(members.job);
  if (it != schedule_.end() && imgmcp::WallMs(clock_) < it->second.next_read_ms)
    return Status::Ok();
  const bool followed = it != schedule_.end();  // false: its first read here
  const int reads = followed ? it->second.reads : 0;
  const gemini::BatchState told = followed ? it->second.state : gemini::BatchState::kPending;
  Result<gemini::BatchJob> job = client_.Read(members.job, stop);
  if (!job.ok()) {
    if (job.error().code == ErrorCode::kNotFound) {
      FailAll(members, MakeError(ErrorCode::kUnavailable,
                                 "the Gemini batch job " + members.job +
                                     " is gone (Gemini no longer knows it); nothing was "
                                     "committed. Call generate_image again."));
      schedule_.erase(members.job);
    } else {
      Schedule(members.job, reads + 1, told);
    }
    return job.error();
  }
  if (!gemini::IsFinal(job->state)) {
    Schedule(members.job, reads + 1, job->state);
    if (!followed || told != job->state) TellAll(members, job->state);
    return Status::Ok();
  }
  schedule_.erase(members.job);
  if (job->state != gemini::BatchState::kSucceeded) {
    std::string why =
        "the Gemini batch job " + members.job + " ended " + gemini::BatchStateName(job->state);
    if (!job->error.empty()) why += ": " + job->error;
    FailAll(members, MakeError(ErrorCode::kUnavailable,
                               why + "; nothing was committed. Call generate_image again."));
    return Status::Ok();
  }
  std::map<std::string, const gemini::BatchAnswer*> by_key;
  for (const gemini::BatchAnswer& answer : job->answers) by_key[answer.key] = &answer;
  for (const session::TaskRecord& task : members.tasks) {
    auto found = by_key.find(task.task_id);
    if (found == by_key.end()) {
      work_.Finish(task, MakeError(ErrorCode::kDataLoss, "the Gemini batch job " + members.job +
                                                             " sent no answer for this request"));
    } else {
      work_.Finish(task, *found->second);
    }
  }
  log::Info(kPollerLog, "batch " + group + " (" + members.job + ") ended with " +
                            std::to_string(job->answers.size()) + " answer(s)");
  return Status::Ok();
}

Status BatchPoller::FitOneJob(const std::string& group, std::vector<gemini::BatchRequest>& requests,
                              Group& sent) {
  std::vector<size_t> sizes;
  sizes.reserve(requests.size());
  for (const gemini::BatchRequest& request : requests) sizes.push_back(request.body.size());
  ASSIGN_OR_RETURN(
      std::vector<std::vector<size_t>> jobs,
      gemini::SplitBatch(sizes, std::max<size_t>(requests.size(), 1), options_.max_job_bytes));
  if (jobs.size() <= 1) return Status::Ok();
  const size_t fit = jobs.front().size();  // SplitBatch keeps the order: the first `fit` go
  for (size_t i = fit; i < requests.size(); ++i) {
    RETURN_IF_ERROR(tasks_.Ungroup(group, requests[i].key));
  }
  log::Info(kPollerLog, "batch " + group + ": " + std::to_string(requests.size() - fit) +
                            " call(s) beyond the job's size wait for the next job");
  requests.resize(fit);
  sent.tasks.resize(fit);
  return Status::Ok();
}

void BatchPoller::FailAll(const Group& members, const Error& error) {
  for (const session::TaskRecord& task : members.tasks) work_.Finish(task, error);
}

void BatchPoller::TellAll(const Group& members, gemini::BatchState state) {
  const std::string message =
      std::string("in Gemini batch ") + members.job + ": " + gemini::BatchStateName(state);
  for (const session::TaskRecord& task : members.tasks) work_.Progress(task, message);
}

void BatchPoller::CancelAbandoned(const std::map<std::string, Group>& groups,
                                  std::stop_token stop) {
  std::set<std::string> followed;
  for (const auto& [name, group] : groups) followed.insert(group.job);
  for (auto it = schedule_.begin(); it != schedule_.end();) {
    if (followed.count(it->first) > 0 || stop.stop_requested()) {
      ++it;
      continue;
    }
    Result<gemini::BatchJob> cancelled = client_.Cancel(it->first, stop);
    if (!cancelled.ok() && Transient(cancelled.error())) {
      log::Warn(kPollerLog, "cancelling " + it->first + ": " + cancelled.error().message);
      ++it;  // asked again at the next round
      continue;
    }
    log::Info(kPollerLog, it->first + ": every task of it was cancelled, so was the job");
    it = schedule_.erase(it);
  }
}

void BatchPoller::Schedule(const std::string& job, int reads, gemini::BatchState state) {
  const double unit = std::uniform_real_distribution<double>(0, 1)(jitter_);
  const auto wait = gemini::BatchPollInterval(options_.first_poll, reads, unit);
  schedule_[job] = {imgmcp::WallMs(clock_) + wait.count(), reads, state};
}

}  // namespace imgmcp::app
