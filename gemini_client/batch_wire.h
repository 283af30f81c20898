// Gemini Batch API wire format, as pure functions: the body of models/{model}:batchGenerateContent
// with its requests inlined, and the long-running operation that call, batches/{id} and
// batches/{id}:cancel answer. Each request of a job is an ordinary generateContent body
// (wire_format.h builds it) under a key unique in the job; each answer comes back under its key
// as an ordinary generateContent response, or an error, which BatchAnswer carries in the shape
// ParseGenerateResponse reads, so a batch answer becomes an image or an actionable error exactly
// as an immediate one does.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace imgmcp::gemini {

// The most one batchGenerateContent body may carry with its requests inlined (the API's limit for
// inline requests); SplitBatch keeps each job's body under it.
inline constexpr size_t kMaxInlineBatchBytes = size_t{20} << 20;

// One request of a job: its key (1-64 of A-Z a-z 0-9 - _, unique in the job) and its
// generateContent body (a JSON object, as BuildGenerateRequest makes it).
struct BatchRequest {
  std::string key;
  std::string body;
};

// The body of POST models/{model}:batchGenerateContent: {"batch": {"display_name", "input_config":
// {"requests": {"requests": [{"request": body, "metadata": {"key": key}}, …]}}}}.
// kInvalidArgument: no request, a key that is not one or is repeated, a body that is not a JSON
// object.
Result<std::string> BuildBatchCreate(std::string_view display_name,
                                     const std::vector<BatchRequest>& requests);

// What a job body costs beyond its requests' bodies: the envelope, and each request's.
inline constexpr size_t kBatchEnvelopeBytes = 256;
inline constexpr size_t kBatchRequestOverheadBytes = 128;

// Groups requests (given by their bodies' sizes, in order) into jobs of at most `max_count`
// requests whose bodies, with the overheads above, stay within `max_bytes`; the order is kept.
// A request too large for any job (kInvalidArgument names it) is never split off silently.
Result<std::vector<std::vector<size_t>>> SplitBatch(const std::vector<size_t>& body_sizes,
                                                    size_t max_count,
                                                    size_t max_bytes = kMaxInlineBatchBytes);

// A job's state (metadata.state, BATCH_STATE_…).
enum class BatchState { kPending, kRunning, kSucceeded, kFailed, kCancelled, kExpired };
// "pending", "running", "succeeded", "failed", "cancelled", "expired".
const char* BatchStateName(BatchState state);
// True for the states a job never leaves.
bool IsFinal(BatchState state);

// One answer of a finished job, under its request's key: `http_status` and `body` as
// ParseGenerateResponse takes them — 200 and the generateContent response, or the request's
// error as the HTTP status its code stands for and {"error": {code, message, status}}.
struct BatchAnswer {
  std::string key;
  int http_status = 200;
  std::string body;
};

// A job as an operation shows it.
struct BatchJob {
  std::string name;          // "batches/…"
  std::string display_name;  // the name its creator gave it (BuildBatchCreate)
  BatchState state = BatchState::kPending;
  std::string error;                 // a failed job's error.message, when it says one
  std::vector<BatchAnswer> answers;  // a finished job's inlined answers, in the order sent back
};

// Reads the operation (or the batch resource itself) that batchGenerateContent, batches/{id} and
// batches/{id}:cancel answer with HTTP `http_status`. An HTTP error is kUnavailable (429, 5xx:
// ask again later), kNotFound (404: the job is gone) or kPermissionDenied/kInvalidArgument, its
// message Gemini's. A body without a job name or state is kDataLoss.
Result<BatchJob> ParseBatchOperation(int http_status, std::string_view body);

// One page of GET batches (batches.list): its jobs, read as ParseBatchOperation reads one, and the
// token of the next page ("" on the last).
struct BatchPage {
  std::vector<BatchJob> jobs;
  std::string next_page_token;
};
Result<BatchPage> ParseBatchList(int http_status, std::string_view body);

}  // namespace imgmcp::gemini
