#include "server/tools/store_task_watch.h"

#include <utility>

#include "common/log.h"
#include "server/tools/store_task_ledger.h"

namespace imgmcp::tools {

namespace {
constexpr char kTasksLog[] = "tasks";
}  // namespace

StoreTaskWatch::~StoreTaskWatch() { SetListener(nullptr); }

void StoreTaskWatch::SetListener(Listener listener) {
  MutexLock set_lock(set_mu_);
  const bool start = listener && !thread_.joinable();
  const bool stop = !listener && thread_.joinable();
  if (stop) store_.SetTaskListener(nullptr);  // no report is queued from here on
  {
    MutexLock lock(mu_);
    listener_ = std::move(listener);
    stopping_ = stop;
    if (stop) {
      queue_.clear();
      queued_ids_.clear();
    }
  }
  if (stop) {
    thread_.request_stop();  // wakes Loop's wait
    thread_.join();
    return;
  }
  if (start) {
    thread_ = std::jthread([this](std::stop_token stop_loop) { Loop(std::move(stop_loop)); });
    store_.SetTaskListener([this](const session::TaskChange& change) { Enqueue(change); });
  }
}

void StoreTaskWatch::Enqueue(const session::TaskChange& change) {
  {
    MutexLock lock(mu_);
    if (stopping_ || !queued_ids_.insert(change.task_id).second) return;
    if (queue_.size() >= kMaxQueued) {
      log::Warn(kTasksLog, "dropping the report of task " + queue_.front().task_id +
                               "'s change: too many are waiting");
      queued_ids_.erase(queue_.front().task_id);
      queue_.pop_front();
    }
    queue_.push_back(change);
  }
  cv_.notify_one();
}

void StoreTaskWatch::Loop(std::stop_token stop) {
  MutexLock lock(mu_);
  while (true) {
    cv_.wait(lock, stop, [this] {
      mu_.AssertHeld();
      return !queue_.empty();
    });
    if (stop.stop_requested()) return;
    session::TaskChange change = std::move(queue_.front());
    queue_.pop_front();
    queued_ids_.erase(change.task_id);
    Listener listener = listener_;
    lock.unlock();
    if (listener) {
      mcp::TaskWatch::Change announced{change.task_id, change.owner, TaskStateOf(change.status)};
      listener(announced, [this, &change] { return Read(change); });
    }
    lock.lock();
  }
}

std::optional<mcp::TaskSnapshot> StoreTaskWatch::Read(const session::TaskChange& change) {
  auto record = store_.GetTask(change.task_id, change.owner);
  if (!record.ok()) {
    log::Warn(kTasksLog, "task " + change.task_id + ": " + record.error().message);
    return std::nullopt;
  }
  if (!*record) return std::nullopt;
  return ledger_.Snapshot(**record);
}

}  // namespace imgmcp::tools
