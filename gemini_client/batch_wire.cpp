#include "gemini_client/batch_wire.h"

#include <set>
#include <utility>

#include "common/json.h"

namespace imgmcp::gemini {
namespace {

constexpr size_t kMostKeyChars = 64;

bool IsKey(std::string_view key) {
  if (key.empty() || key.size() > kMostKeyChars) return false;
  for (const char c : key) {
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_';
    if (!word) return false;
  }
  return true;
}

Json ParseBatchJson(std::string_view text) {
  return Json::parse(text.begin(), text.end(), /*cb=*/nullptr, /*allow_exceptions=*/false);
}

std::string BatchText(const Json& object, const char* key) {
  if (!object.is_object()) return "";
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

constexpr std::pair<std::string_view, BatchState> kStates[] = {
    {"BATCH_STATE_PENDING", BatchState::kPending},
    {"BATCH_STATE_RUNNING", BatchState::kRunning},
    {"BATCH_STATE_SUCCEEDED", BatchState::kSucceeded},
    {"BATCH_STATE_FAILED", BatchState::kFailed},
    {"BATCH_STATE_CANCELLED", BatchState::kCancelled},
    {"BATCH_STATE_EXPIRED", BatchState::kExpired}};

// The HTTP status a google.rpc.Status code stands for (the mapping Google's REST APIs use).
int HttpStatusOfRpcCode(int64_t code) {
  switch (code) {
    case 3:
      return 400;  // INVALID_ARGUMENT
    case 4:
      return 504;  // DEADLINE_EXCEEDED
    case 5:
      return 404;  // NOT_FOUND
    case 7:
      return 403;  // PERMISSION_DENIED
    case 8:
      return 429;  // RESOURCE_EXHAUSTED
    case 9:
      return 400;  // FAILED_PRECONDITION
    case 14:
      return 503;  // UNAVAILABLE
    case 16:
      return 401;  // UNAUTHENTICATED
    default:
      return 500;
  }
}

// An answer's error, {code, message, status}, as an HTTP answer ParseGenerateResponse reads.
BatchAnswer ErrorAnswer(std::string key, const Json& error) {
  const auto code = error.is_object() && error.contains("code") && error["code"].is_number_integer()
                        ? error["code"].get<int64_t>()
                        : int64_t{13};
  BatchAnswer answer{std::move(key), HttpStatusOfRpcCode(code), ""};
  Json body = {{"code", answer.http_status},
               {"message", BatchText(error, "message")},
               {"status", BatchText(error, "status")}};
  answer.body = Json{{"error", std::move(body)}}.dump();
  return answer;
}

// The inlined answers of a finished job: response.inlinedResponses.inlinedResponses[] (or the
// batch's output.inlinedResponses, where the batch resource itself was sent).
Result<std::vector<BatchAnswer>> Answers(const Json& output) {
  std::vector<BatchAnswer> answers;
  if (!output.is_object()) return answers;
  const auto outer = output.find("inlinedResponses");
  if (outer == output.end()) return answers;
  const Json* list = &*outer;
  if (list->is_object() && list->contains("inlinedResponses")) list = &(*list)["inlinedResponses"];
  if (!list->is_array()) return MakeError(ErrorCode::kDataLoss, "inlinedResponses is not a list");
  for (const Json& item : *list) {
    const std::string key =
        item.is_object() && item.contains("metadata") ? BatchText(item["metadata"], "key") : "";
    if (key.empty()) {
      return MakeError(ErrorCode::kDataLoss, "a batch answer has no metadata.key");
    }
    if (item.contains("error")) {
      answers.push_back(ErrorAnswer(key, item["error"]));
    } else if (item.contains("response") && item["response"].is_object()) {
      answers.push_back({key, 200, item["response"].dump()});
    } else {
      return MakeError(ErrorCode::kDataLoss,
                       "the batch answer for key \"" + key + "\" has neither response nor error");
    }
  }
  return answers;
}

Error BatchHttpError(int http_status, const Json& doc) {
  const Json error = doc.is_object() && doc.contains("error") ? doc["error"] : Json();
  std::string message = BatchText(error, "message");
  if (message.empty()) message = "HTTP " + std::to_string(http_status);
  message = "Gemini Batch API: " + message;
  if (http_status == 429 || http_status >= 500) {
    return MakeError(ErrorCode::kUnavailable, message + " (asked again later)");
  }
  if (http_status == 404) return MakeError(ErrorCode::kNotFound, message);
  if (http_status == 401 || http_status == 403) {
    return MakeError(ErrorCode::kPermissionDenied, message);
  }
  return MakeError(ErrorCode::kInvalidArgument, message);
}

}  // namespace

Result<std::string> BuildBatchCreate(std::string_view display_name,
                                     const std::vector<BatchRequest>& requests) {
  if (requests.empty()) return MakeError(ErrorCode::kInvalidArgument, "a batch needs a request");
  Json list = Json::array();
  std::set<std::string_view> keys;
  for (const BatchRequest& request : requests) {
    if (!IsKey(request.key)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "batch key \"" + request.key + "\" is not 1-64 of A-Z a-z 0-9 - _");
    }
    if (!keys.insert(request.key).second) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "batch key \"" + request.key + "\" is given twice");
    }
    Json body = ParseBatchJson(request.body);
    if (!body.is_object()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "the request of batch key \"" + request.key + "\" is not a JSON object");
    }
    list.push_back({{"request", std::move(body)}, {"metadata", {{"key", request.key}}}});
  }
  Json batch = {{"display_name", std::string(display_name)},
                {"input_config", {{"requests", {{"requests", std::move(list)}}}}}};
  return Json{{"batch", std::move(batch)}}.dump();
}

Result<std::vector<std::vector<size_t>>> SplitBatch(const std::vector<size_t>& body_sizes,
                                                    size_t max_count, size_t max_bytes) {
  std::vector<std::vector<size_t>> jobs;
  size_t bytes = kBatchEnvelopeBytes;
  for (size_t i = 0; i < body_sizes.size(); ++i) {
    const size_t need = body_sizes[i] + kBatchRequestOverheadBytes;
    if (kBatchEnvelopeBytes + need > max_bytes) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "request " + std::to_string(i) + " (" + std::to_string(body_sizes[i]) +
                           " bytes) is larger than a batch job may carry (" +
                           std::to_string(max_bytes) + " bytes)");
    }
    if (jobs.empty() || jobs.back().size() >= max_count || bytes + need > max_bytes) {
      jobs.emplace_back();
      bytes = kBatchEnvelopeBytes;
    }
    jobs.back().push_back(i);
    bytes += need;
  }
  return jobs;
}

const char* BatchStateName(BatchState state) {
  switch (state) {
    case BatchState::kPending:
      return "pending";
    case BatchState::kRunning:
      return "running";
    case BatchState::kSucceeded:
      return "succeeded";
    case BatchState::kFailed:
      return "failed";
    case BatchState::kCancelled:
      return "cancelled";
    case BatchState::kExpired:
      return "expired";
  }
  return "pending";
}

bool IsFinal(BatchState state) {
  return state != BatchState::kPending && state != BatchState::kRunning;
}

namespace {

// An operation {name, metadata: batch, done, response | error}, or the batch resource itself.
Result<BatchJob> ReadOperation(const Json& doc) {
  if (!doc.is_object()) {
    return MakeError(ErrorCode::kDataLoss, "Gemini Batch API: the answer is not a JSON object");
  }
  const Json& batch =
      doc.contains("metadata") && doc["metadata"].is_object() ? doc["metadata"] : doc;
  BatchJob job;
  job.name = BatchText(batch, "name");
  if (job.name.empty()) job.name = BatchText(doc, "name");
  job.display_name = BatchText(batch, "displayName");
  if (job.display_name.empty()) job.display_name = BatchText(batch, "display_name");
  const std::string state = BatchText(batch, "state");
  bool known = false;
  for (const auto& [word, value] : kStates) {
    if (state == word) {
      job.state = value;
      known = true;
    }
  }
  if (job.name.rfind("batches/", 0) != 0 || !known) {
    return MakeError(ErrorCode::kDataLoss,
                     "Gemini Batch API: the answer names no batch job and state (name \"" +
                         job.name + "\", state \"" + state + "\")");
  }
  if (doc.contains("error")) job.error = BatchText(doc["error"], "message");
  const Json output = doc.contains("response")   ? doc["response"]
                      : batch.contains("output") ? batch["output"]
                                                 : Json();
  ASSIGN_OR_RETURN(job.answers, Answers(output));
  return job;
}

}  // namespace

Result<BatchJob> ParseBatchOperation(int http_status, std::string_view body) {
  const Json doc = ParseBatchJson(body);
  if (http_status < 200 || http_status >= 300) return BatchHttpError(http_status, doc);
  return ReadOperation(doc);
}

Result<BatchPage> ParseBatchList(int http_status, std::string_view body) {
  const Json doc = ParseBatchJson(body);
  if (http_status < 200 || http_status >= 300) return BatchHttpError(http_status, doc);
  if (!doc.is_object()) {
    return MakeError(ErrorCode::kDataLoss, "Gemini Batch API: the list is not a JSON object");
  }
  BatchPage page;
  page.next_page_token = BatchText(doc, "nextPageToken");
  const char* key = doc.contains("operations") ? "operations" : "batches";
  if (!doc.contains(key)) return page;  // an empty list may leave the field out
  if (!doc[key].is_array()) {
    return MakeError(ErrorCode::kDataLoss,
                     std::string("Gemini Batch API: ") + key + " in the list is not an array");
  }
  for (const Json& op : doc[key]) {
    ASSIGN_OR_RETURN(BatchJob job, ReadOperation(op));
    page.jobs.push_back(std::move(job));
  }
  return page;
}

}  // namespace imgmcp::gemini
