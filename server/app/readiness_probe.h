// ReadinessProbe: whether this replica's store answers, for GET /readyz (http_listener.h,
// HttpOptions::readiness). A background thread checks every kPeriod (while the store opens, as soon
// as the open ends) — the data dir is usable
// (session::CheckDataDirUsable: create, write, lock) and the store answers a one-row listing (on
// PostgreSQL a query through the pool) — and keeps the verdict; /readyz only reads it, so a
// database that hangs never holds an HTTP worker. A check that has not answered for kStale counts
// as a failure. Changes of the verdict are logged (with the detail; /readyz says only what failed).
#pragma once

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include "common/thread_annotations.h"
#include "session/deferred_session_store.h"

namespace imgmcp::app {

class ReadinessProbe {
 public:
  static constexpr std::chrono::milliseconds kPeriod{1000};
  static constexpr std::chrono::milliseconds kStale{3000};

  // Starts checking at once. `store` must outlive the probe.
  ReadinessProbe(session::DeferredSessionStore& store, std::filesystem::path data_dir);
  ~ReadinessProbe();  // stops the thread (waits for a check in progress)
  ReadinessProbe(const ReadinessProbe&) = delete;
  ReadinessProbe& operator=(const ReadinessProbe&) = delete;

  // Why the replica is not ready, or nullopt. Never blocks on the store.
  std::optional<std::string> Problem() const;

 private:
  void Loop(std::stop_token stop);
  // One check: nullopt when the store answered; else a short reason and (in *detail) the error.
  std::optional<std::string> Check(std::string* detail);
  void Record(std::optional<std::string> problem, const std::string& detail);

  session::DeferredSessionStore& store_;
  const std::filesystem::path data_dir_;

  mutable Mutex mu_;                   // guards problem_, check_started_, checking_
  std::condition_variable_any pause_;  // the wait between checks (woken only by the stop)
  std::optional<std::string> problem_ GUARDED_BY(mu_) = std::string("starting");
  std::chrono::steady_clock::time_point check_started_ GUARDED_BY(mu_);
  bool checking_ GUARDED_BY(mu_) = false;
  std::jthread thread_;  // last: started once everything above is set
};

}  // namespace imgmcp::app
