// The fake's Gemini Batch API jobs (FakeGeminiServer serves them): a job's answers are made when
// it is created, each request with the immediate call's rules and its own scripted action; what
// the job shows then follows its schedule, one step per read of batches/{id} — by default
// pending, running, succeeded (set with /_fake/config {"batch_states": [...]}: any of pending,
// running, succeeded, failed, expired, cancelled; the last one is kept). A cancel ends a job that
// is not final. The answers are revealed only once a job has succeeded.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/result.h"

namespace imgmcp::fake_gemini {

// The default schedule, and the words a schedule may hold.
std::vector<std::string> DefaultBatchSchedule();
Result<std::vector<std::string>> ParseBatchSchedule(const Json& states);

class FakeBatches {
 public:
  // A new job of `model` holding `answers` (the inlined items sent back: {response | error,
  // metadata: {key}}); returns its operation as batchGenerateContent answers it.
  Json Create(const std::string& model, const std::string& display_name, Json answers,
              std::vector<std::string> schedule);
  // The job's operation after one more step of its schedule; nullopt when there is no such job.
  std::optional<Json> Read(const std::string& id);
  // Ends the job cancelled unless it is final already; its operation, or nullopt.
  std::optional<Json> Cancel(const std::string& id);
  // Every job: {name, model, state, requests, reads, cancels} (GET /_fake/batches).
  Json List() const;
  // GET /{v}/batches: {operations: [...], nextPageToken} — the newest `page_size` jobs (without
  // their answers) created before the job `page_token` names (its id; "" = from the newest).
  // Listing does not move a job along its schedule.
  Json ListOperations(size_t page_size, const std::string& page_token) const;
  void Clear();

 private:
  struct Job {
    std::string model;
    std::string display_name;
    Json answers;
    std::vector<std::string> schedule;
    size_t step = 0;  // index into schedule of the state shown now
    bool cancelled = false;
    int64_t reads = 0;
    int64_t cancels = 0;
  };
  static std::string StateOf(const Job& job);
  static Json Operation(const std::string& id, const Job& job);

  mutable std::mutex mutex_;  // guards jobs_ and next_id_
  std::map<std::string, Job> jobs_;
  int64_t next_id_ = 1;
};

}  // namespace imgmcp::fake_gemini
