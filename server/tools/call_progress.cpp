#include "server/tools/call_progress.h"

namespace imgmcp::tools {

void CallProgress::Report(const std::string& message) {
  if (!ctx_.HasProgressToken()) return;
  std::lock_guard<std::mutex> lock(mu_);
  step_ += 1;
  ctx_.ReportProgress(step_, std::nullopt, message);
}

ProgressHeartbeat::ProgressHeartbeat(CallProgress& progress, std::string what,
                                     std::chrono::milliseconds interval)
    : progress_(progress), what_(std::move(what)), interval_(interval) {
  progress_.Report(what_);
  thread_ = std::thread([this] { Run(); });
}

ProgressHeartbeat::~ProgressHeartbeat() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void ProgressHeartbeat::Run() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, interval_, [this] { return stop_; })) {
    const auto secs =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start)
            .count();
    lock.unlock();
    progress_.Report(what_ + " (" + std::to_string(secs) + " s)");
    lock.lock();
  }
}

}  // namespace imgmcp::tools
