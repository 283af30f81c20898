#include "mcp/worker_pool.h"

#include <exception>
#include <utility>

#include "common/log.h"

namespace imgmcp::mcp {

WorkerPool::WorkerPool(size_t max_threads) : max_threads_(max_threads == 0 ? 1 : max_threads) {}

WorkerPool::~WorkerPool() { Shutdown(); }

Status WorkerPool::Submit(std::function<void()> task) {
  MutexLock lock(mu_);
  if (stopping_) return MakeError(ErrorCode::kUnavailable, "server is shutting down");
  if (idle_ > tasks_.size()) {
    tasks_.push_back(std::move(task));
    cv_.notify_one();
    return Status::Ok();
  }
  if (threads_.size() >= max_threads_) {
    return MakeError(ErrorCode::kResourceExhausted,
                     "server busy: " + std::to_string(max_threads_) +
                         " calls are already in progress; retry later");
  }
  tasks_.push_back(std::move(task));
  threads_.emplace_back([this] { WorkerLoop(); });
  return Status::Ok();
}

void WorkerPool::WorkerLoop() {
  MutexLock lock(mu_);
  while (true) {
    ++idle_;
    cv_.wait(lock, [this] {
      mu_.AssertHeld();
      return stopping_ || !tasks_.empty();
    });
    --idle_;
    if (tasks_.empty()) return;  // stopping and drained
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    try {
      task();
    } catch (const std::exception& e) {  // tasks catch their own errors; this is a last resort
      log::Error("mcp.pool", std::string("task threw: ") + e.what());
    } catch (...) {
      log::Error("mcp.pool", "task threw a non-std exception");
    }
    task = nullptr;  // destroy captures outside the lock
    lock.lock();
  }
}

void WorkerPool::Shutdown() {
  std::vector<std::thread> threads;
  {
    MutexLock lock(mu_);
    stopping_ = true;
    threads.swap(threads_);
  }
  cv_.notify_all();
  for (std::thread& t : threads) t.join();
}

size_t WorkerPool::ThreadCount() const {
  MutexLock lock(mu_);
  return threads_.size();
}

}  // namespace imgmcp::mcp
