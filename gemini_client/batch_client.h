// BatchClient: the Gemini Batch API calls — create a job of inlined generateContent requests
// (POST {base}/{version}/models/{model}:batchGenerateContent), read it (GET
// {base}/{version}/batches/{id}) and cancel it (POST …/batches/{id}:cancel). The wire format is
// batch_wire.h's; this class adds the endpoint, the credential and the transport.
//
// Each call is one attempt: the one who polls a job asks again at its next interval, so a
// transient failure (kUnavailable) costs nothing but time. A create that fails in transport may
// still have made a job upstream; the caller names each job uniquely (display_name) so it can
// tell. Only the Gemini API has this: Vertex AI's batch prediction reads its requests from Cloud
// Storage or BigQuery, so Create refuses a Vertex target.
#pragma once

#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "gemini_client/batch_wire.h"
#include "gemini_client/gemini_client.h"
#include "gemini_client/http_call.h"

namespace imgmcp::gemini {

// Why batch delivery is not offered on Vertex AI: the message Create's refusal carries.
inline constexpr char kVertexBatchRefusal[] =
    "batch delivery is not offered on Vertex AI: Vertex batch prediction reads its requests "
    "from Cloud Storage or BigQuery, which imgmcp does not use. Use the Gemini API "
    "(GEMINI_API_KEY) for batch delivery, or delivery \"now\".";

// True for "batches/ID" with ID of A-Z a-z 0-9 - _ (at most 128 characters): a job name that
// can go into a URL path as it is.
bool IsBatchJobName(std::string_view name);

class BatchClient {
 public:
  // Validates `options` as GeminiClient does; kFailedPrecondition (kVertexBatchRefusal) for a
  // Vertex AI target. `send` sends one request (&SendHttp, or the network module's).
  static Result<std::unique_ptr<BatchClient>> Create(GeminiClientOptions options,
                                                     SendHttpFunction send);

  // Creates one job of `requests` (BuildBatchCreate) for `model`. The job as Gemini answers:
  // its name and (usually) kPending.
  Result<BatchJob> Submit(const std::string& model, std::string_view display_name,
                          const std::vector<BatchRequest>& requests, std::stop_token cancel);
  // The job now; a finished one with its answers. kNotFound: Gemini no longer knows it.
  Result<BatchJob> Read(const std::string& job_name, std::stop_token cancel);
  // Asks Gemini to cancel the job; the job as it answers.
  Result<BatchJob> Cancel(const std::string& job_name, std::stop_token cancel);
  // The newest job named `display_name` among the newest `max_pages` pages of `page_size` (GET
  // batches): how a poller that died between creating a job and recording it learns the job
  // exists, so it does not create it twice. nullopt when none is.
  Result<std::optional<BatchJob>> FindByDisplayName(std::string_view display_name,
                                                    std::stop_token cancel, int max_pages = 10,
                                                    int page_size = 100);

 private:
  BatchClient(GeminiClientOptions options, Endpoint endpoint, std::shared_ptr<RequestAuth> auth,
              HttpCallOptions http, SendHttpFunction send);
  // One request with the credential (a 401 to a token refreshes it once); the answer parsed
  // by ParseBatchOperation; every message scrubbed of the credentials.
  Result<BatchJob> Call(const std::string& method, const std::string& path, std::string_view body,
                        std::stop_token cancel);
  // The answer of one request (status 200 or not), scrubbed; a transport failure as an error.
  Result<HttpAnswer> Send(const std::string& method, const std::string& path, std::string_view body,
                          std::stop_token cancel);
  // `error` with the credentials redacted from its message (an answer may echo them).
  Error Scrubbed(Error error) const;
  // {prefix}/{version}/`rest`.
  std::string Path(const std::string& rest) const;

  const GeminiClientOptions options_;
  const Endpoint endpoint_;
  const std::shared_ptr<RequestAuth> auth_;
  const HttpCallOptions http_;
  const SendHttpFunction send_;
};

}  // namespace imgmcp::gemini
