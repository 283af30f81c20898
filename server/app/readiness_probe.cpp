#include "server/app/readiness_probe.h"

#include <utility>

#include "common/log.h"

namespace imgmcp::app {

ReadinessProbe::ReadinessProbe(session::DeferredSessionStore& store, std::filesystem::path data_dir)
    : store_(store), data_dir_(std::move(data_dir)), thread_([this] { Loop(); }) {}

ReadinessProbe::~ReadinessProbe() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::optional<std::string> ReadinessProbe::Problem() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (checking_ && std::chrono::steady_clock::now() - check_started_ > kStale) {
    return "the store did not answer within " + std::to_string(kStale.count() / 1000) + " s";
  }
  return problem_;
}

void ReadinessProbe::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    checking_ = true;
    check_started_ = std::chrono::steady_clock::now();
    lock.unlock();
    std::string detail;
    std::optional<std::string> problem = Check(&detail);
    Record(std::move(problem), detail);
    lock.lock();
    checking_ = false;
    // While the store opens, its end is looked for often (OpenFinished is cheap).
    const auto pause = store_.OpenFinished() ? kPeriod : kOpeningPeriod;
    cv_.wait_for(lock, pause, [this] { return stopping_; });
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
  std::lock_guard<std::mutex> lock(mu_);
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
