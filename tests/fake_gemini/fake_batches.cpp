#include "tests/fake_gemini/fake_batches.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace imgmcp::fake_gemini {
namespace {

constexpr const char* kStates[] = {"pending", "running", "succeeded",
                                   "failed",  "expired", "cancelled"};

bool IsFinalState(const std::string& state) { return state != "pending" && state != "running"; }

std::string Upper(std::string word) {
  for (char& c : word) c = static_cast<char>(c - 'a' + 'A');
  return word;
}

}  // namespace

std::vector<std::string> DefaultBatchSchedule() { return {"pending", "running", "succeeded"}; }

Result<std::vector<std::string>> ParseBatchSchedule(const Json& states) {
  std::vector<std::string> schedule;
  if (states.is_array()) {
    for (const Json& s : states) {
      if (!s.is_string() || std::find(std::begin(kStates), std::end(kStates),
                                      s.get<std::string>()) == std::end(kStates)) {
        schedule.clear();
        break;
      }
      schedule.push_back(s.get<std::string>());
    }
  }
  if (schedule.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "batch_states must be a non-empty array of pending, running, succeeded, "
                     "failed, expired, cancelled");
  }
  return schedule;
}

std::string FakeBatches::StateOf(const Job& job) {
  return job.cancelled ? "cancelled" : job.schedule[job.step];
}

Json FakeBatches::Operation(const std::string& id, const Job& job) {
  const std::string name = "batches/" + id;
  const std::string state = StateOf(job);
  Json op = {
      {"name", name},
      {"metadata",
       {{"@type", "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch"},
        {"name", name},
        {"model", "models/" + job.model},
        {"displayName", job.display_name},
        {"state", "BATCH_STATE_" + Upper(state)},
        {"batchStats", {{"requestCount", std::to_string(job.answers.size())}}}}},
      {"done", IsFinalState(state)}};
  if (state == "succeeded") {
    op["response"] = {
        {"@type",
         "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatchOutput"},
        {"inlinedResponses", {{"inlinedResponses", job.answers}}}};
  } else if (state == "failed") {
    op["error"] = {{"code", 13}, {"message", "the batch job failed (scripted by the fake)"}};
  }
  return op;
}

Json FakeBatches::Create(const std::string& model, const std::string& display_name, Json answers,
                         std::vector<std::string> schedule) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string id = "fake" + std::to_string(next_id_++);
  Job& job = jobs_[id];
  job.model = model;
  job.display_name = display_name;
  job.answers = std::move(answers);
  job.schedule = std::move(schedule);
  return Operation(id, job);
}

std::optional<Json> FakeBatches::Read(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = jobs_.find(id);
  if (it == jobs_.end()) return std::nullopt;
  Job& job = it->second;
  ++job.reads;
  if (!job.cancelled && job.step + 1 < job.schedule.size() &&
      !IsFinalState(job.schedule[job.step])) {
    ++job.step;
  }
  return Operation(id, job);
}

std::optional<Json> FakeBatches::Cancel(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = jobs_.find(id);
  if (it == jobs_.end()) return std::nullopt;
  Job& job = it->second;
  ++job.cancels;
  if (!IsFinalState(StateOf(job))) job.cancelled = true;
  return Operation(id, job);
}

Json FakeBatches::List() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Json list = Json::array();
  for (const auto& [id, job] : jobs_) {
    list.push_back({{"name", "batches/" + id},
                    {"model", job.model},
                    {"state", StateOf(job)},
                    {"requests", job.answers.size()},
                    {"reads", job.reads},
                    {"cancels", job.cancels}});
  }
  return list;
}

Json FakeBatches::ListOperations(size_t page_size, const std::string& page_token) const {
  std::lock_guard<std::mutex> lock(mutex_);
  // Ids are "fake<n>": newest first is by n, descending.
  std::vector<std::pair<int64_t, std::string>> ids;
  for (const auto& [id, job] : jobs_) ids.emplace_back(std::stoll(id.substr(4)), id);
  std::sort(ids.rbegin(), ids.rend());
  const int64_t before = page_token.rfind("fake", 0) == 0 ? std::stoll(page_token.substr(4))
                                                          : std::numeric_limits<int64_t>::max();
  Json out = {{"operations", Json::array()}};
  for (const auto& [n, id] : ids) {
    if (n >= before) continue;
    if (out["operations"].size() == page_size) {
      out["nextPageToken"] = out["operations"].back()["name"].get<std::string>().substr(8);
      break;
    }
    Json op = Operation(id, jobs_.at(id));
    op.erase("response");
    out["operations"].push_back(std::move(op));
  }
  return out;
}

void FakeBatches::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  jobs_.clear();
}

}  // namespace imgmcp::fake_gemini
