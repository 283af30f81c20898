// Runs tool calls (and other slow requests) off the transport's reader thread.
//
// Grows on demand: a task starts at once on an idle thread or on a new one, up to `max_threads`.
// Tool calls may park for a long time waiting for a session's edit turn, so a small fixed pool
// could starve later calls (or deadlock behind them); instead each in-flight call gets its own
// thread, and beyond the cap Submit fails with kResourceExhausted so the caller can answer with a
// clear error. Threads stay alive (idle) until Shutdown.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "common/result.h"
#include "common/thread_annotations.h"

namespace imgmcp::mcp {

class WorkerPool {
 public:
  explicit WorkerPool(size_t max_threads);
  ~WorkerPool();  // Shutdown()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Starts `task` now (never queues behind running tasks). kResourceExhausted when max_threads
  // tasks are already running; kUnavailable after Shutdown.
  Status Submit(std::function<void()> task);

  // Stops accepting tasks, lets the ones already submitted finish, and joins every thread.
  void Shutdown();

  size_t max_threads() const { return max_threads_; }
  size_t ThreadCount() const;

 private:
  void WorkerLoop();

  const size_t max_threads_;
  mutable Mutex mu_;  // guards tasks_, threads_, idle_, stopping_
  std::condition_variable_any cv_;
  std::deque<std::function<void()>> tasks_ GUARDED_BY(mu_);  // submitted, not yet picked up
  std::vector<std::thread> threads_ GUARDED_BY(mu_);
  size_t idle_ GUARDED_BY(mu_) = 0;  // threads waiting for a task
  bool stopping_ GUARDED_BY(mu_) = false;
};

}  // namespace imgmcp::mcp
