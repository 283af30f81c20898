#include "server/app/readiness_probe.h"

#include <utility>

#include "common/log.h"

namespace imgmcp::app {

ReadinessProbe::ReadinessProbe(session::DeferredSessionStore& store, std::filesystem::path data_dir)
    : store_(store),
      data_dir_(std::move(data_dir)),
      thread_([this](std::stop_token stop) { Loop(stop); }) {}

ReadinessProbe::~ReadinessProbe() {
  thread_.request_stop();  // wakes both of its waits
  thread_.join();
}

std::optional<std::string> ReadinessProbe::Problem() const {
  MutexLock lock(mu_);
  if (checking_ && std::chrono::steady_clock::now() - check_started_ > kStale) {
    return "the store did not answer within " + std::to_string(kStale.count() / 1000) + " s";
  }
  return problem_;
}

void ReadinessProbe::Loop(std::stop_token stop) {
  while (!stop.stop_requested()) {
    {
      MutexLock lock(mu_);
      checking_ = true;
      check_started_ = std::chrono::steady_clock::now();
    }
    std::string detail;
    std::optional<std::string> problem = Check(&detail);
    Record(std::move(problem), detail);
    {
      MutexLock lock(mu_);
      checking_ = false;
    }
    if (!store_.OpenFinished()) {
      // While the store opens, its end wakes the next check at once (at the latest kPeriod on:
      // a retrying open's reason may change).
      (void)store_.WaitForOpen(kPeriod, stop);
      continue;
    }
    MutexLock lock(mu_);
    pause_.wait_for(lock, stop, kPeriod, [] { return false; });
  }
}

std::optional<std::string> ReadinessProbe::Check(std::string* detail) {
  if (Status open = store_.WaitForOpen(std::chrono::milliseconds(0)); !open.ok()) {
    if (open.error().code == ErrorCode::kDeadlineExceeded && !store_.OpenFinished()) {
      return "the store is opening";
    }
    *detail = open.error().message;
    return store_.OpenFinished() ? "the store could not be opened"
                                 : "the store is not reachable yet";
  }
  if (Status dir = session::CheckDataDirUsable(data_dir_); !dir.ok()) {
    *detail = dir.error().message;
    return "the data dir is not usable";
  }
  if (auto listed = store_.ListSessions(std::nullopt, 1); !listed.ok()) {
    *detail = listed.error().message;
    return "the store does not answer";
  }
  return std::nullopt;
}

void ReadinessProbe::Record(std::optional<std::string> problem, const std::string& detail) {
  MutexLock lock(mu_);
  if (problem != problem_) {
    if (problem && detail.empty()) {
      log::Info("ready", "not ready: " + *problem);
    } else if (problem) {
      log::Warn("ready", "not ready: " + *problem + " (" + detail + ")");
    } else {
      log::Info("ready", "ready: the store answers");
    }
  }
  problem_ = std::move(problem);
}

}  // namespace imgmcp::app
