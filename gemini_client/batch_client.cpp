#include "gemini_client/batch_client.h"

#include <chrono>
#include <utility>

#include "common/log.h"
#include "gemini_client/models.h"
#include "gemini_client/proxy.h"
#include "gemini_client/redact.h"

namespace imgmcp::gemini {
namespace {

constexpr char kBatchLog[] = "gemini-batch";

bool IsJobIdChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

}  // namespace

bool IsBatchJobName(std::string_view name) {
  constexpr std::string_view kPrefix = "batches/";
  if (name.substr(0, kPrefix.size()) != kPrefix) return false;
  const std::string_view id = name.substr(kPrefix.size());
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    if (!IsJobIdChar(c)) return false;
  }
  return true;
}

Result<std::unique_ptr<BatchClient>> BatchClient::Create(GeminiClientOptions options,
                                                         SendHttpFunction send) {
  if (send == nullptr) {
    return MakeError(ErrorCode::kInternal, "the Gemini batch client needs an HTTP function");
  }
  if (options.vertex.has_value()) {
    return MakeError(ErrorCode::kFailedPrecondition, kVertexBatchRefusal);
  }
  RETURN_IF_ERROR(ValidateOptions(options));
  auto endpoint = ParseBaseUrl(options.base_url);
  if (!endpoint.ok()) return endpoint.error();
  if (options.ca_cert_path.empty()) options.ca_cert_path = SystemCaBundleIfPresent();
  if (options.model_table.empty()) options.model_table = BuiltInGeminiModels();
  auto proxy = ChooseProxy(options.proxies, *endpoint);
  if (!proxy.ok()) return proxy.error();
  std::shared_ptr<RequestAuth> auth = options.auth;
  if (auth == nullptr) auth = std::make_shared<ApiKeyAuth>(options.api_key, "API key");
  HttpCallOptions http;
  http.connect_timeout = options.connect_timeout;
  http.read_timeout = options.read_timeout;
  http.ca_cert_path = options.ca_cert_path;
  http.extra_ca_file = options.extra_ca_file;
  http.proxy = std::move(proxy).value();
  http.auth_header = auth->HeaderName();
  http.timers = options.timers;
  return std::unique_ptr<BatchClient>(new BatchClient(
      std::move(options), std::move(endpoint).value(), std::move(auth), std::move(http), send));
}

BatchClient::BatchClient(GeminiClientOptions options, Endpoint endpoint,
                         std::shared_ptr<RequestAuth> auth, HttpCallOptions http,
                         SendHttpFunction send)
    : options_(std::move(options)),
      endpoint_(std::move(endpoint)),
      auth_(std::move(auth)),
      http_(std::move(http)),
      send_(send) {}

std::string BatchClient::Path(const std::string& rest) const {
  std::string path = endpoint_.path_prefix;
  if (!options_.api_version.empty()) path += "/" + options_.api_version;
  return path + "/" + rest;
}

Result<BatchJob> BatchClient::Submit(const std::string& model, std::string_view display_name,
                                     const std::vector<BatchRequest>& requests,
                                     std::stop_token cancel) {
  auto offered = OfferedModels(options_);
  if (!offered.ok()) return offered.error();
  const imaging::ModelCapabilities* row = nullptr;
  for (const imaging::ModelCapabilities& m : *offered) {
    if (m.id == model) row = &m;
  }
  if (row == nullptr) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "model \"" + model + "\" is not one this server offers");
  }
  if (row->batch_price_factor <= 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "model " + model +
                         " takes no batch delivery (its model-table row has no "
                         "batch_price_factor)");
  }
  auto body = BuildBatchCreate(display_name, requests);
  if (!body.ok()) return body.error();
  return Call("POST", Path("models/" + model + ":batchGenerateContent"), *body, cancel);
}

Result<BatchJob> BatchClient::Read(const std::string& job_name, std::stop_token cancel) {
  if (!IsBatchJobName(job_name)) {
    return MakeError(ErrorCode::kInvalidArgument, "\"" + job_name + "\" is not a batch job name");
  }
  return Call("GET", Path(job_name), "", cancel);
}

Result<BatchJob> BatchClient::Cancel(const std::string& job_name, std::stop_token cancel) {
  if (!IsBatchJobName(job_name)) {
    return MakeError(ErrorCode::kInvalidArgument, "\"" + job_name + "\" is not a batch job name");
  }
  return Call("POST", Path(job_name + ":cancel"), "{}", cancel);
}

Result<std::optional<BatchJob>> BatchClient::FindByDisplayName(std::string_view display_name,
                                                               std::stop_token cancel,
                                                               int max_pages, int page_size) {
  std::string token;
  for (int page = 0; page < max_pages; ++page) {
    std::string path = Path("batches") + "?pageSize=" + std::to_string(page_size);
    if (!token.empty()) path += "&pageToken=" + token;
    ASSIGN_OR_RETURN(HttpAnswer answer, Send("GET", path, "", cancel));
    auto listed = ParseBatchList(answer.status, answer.body);
    if (!listed.ok()) return Scrubbed(listed.error());
    for (BatchJob& job : listed->jobs) {
      if (job.display_name == display_name) return std::optional<BatchJob>(std::move(job));
    }
    token = std::move(listed->next_page_token);
    // A token goes into the query as it is only when it needs no escaping.
    if (token.empty() || !IsBatchJobName("batches/" + token)) break;
  }
  return std::optional<BatchJob>();
}

Result<BatchJob> BatchClient::Call(const std::string& method, const std::string& path,
                                   std::string_view body, std::stop_token cancel) {
  ASSIGN_OR_RETURN(HttpAnswer answer, Send(method, path, body, cancel));
  auto job = ParseBatchOperation(answer.status, answer.body);
  if (!job.ok()) return Scrubbed(job.error());
  return job;
}

Error BatchClient::Scrubbed(Error error) const {
  error.message = Redact(std::move(error.message), auth_->SecretsToScrub());
  return error;
}

Result<HttpAnswer> BatchClient::Send(const std::string& method, const std::string& path,
                                     std::string_view body, std::stop_token cancel) {
  const auto deadline = std::chrono::steady_clock::now() + options_.call_timeout;
  std::vector<std::string> secrets = auth_->SecretsToScrub();
  bool reauthorized = false;
  while (true) {
    auto credential = auth_->Credential(cancel, deadline);
    if (!credential.ok()) return credential.error();
    secrets.push_back(*credential);
    HttpRequest request;
    request.method = method;
    request.path = path;
    request.headers = {{"Accept", "application/json"}, {http_.auth_header, *credential}};
    if (method == "POST") {
      request.content_type = "application/json";
      request.body = body;
    }
    request.peer = "the Gemini Batch API";
    request.max_answer_bytes = kMaxBatchAnswerBytes;
    HttpFailure failure;
    auto answer = send_(endpoint_, request, http_, cancel, deadline, &failure);
    if (!answer.ok()) {
      Error error = answer.error();
      if (failure.stop == HttpStop::kCancelled) error.code = ErrorCode::kCancelled;
      if (failure.stop == HttpStop::kDeadline) error.code = ErrorCode::kDeadlineExceeded;
      error.message = Redact(std::move(error.message), secrets);
      return error;
    }
    if (answer->status == 401 && !reauthorized && auth_->Rejected(*credential)) {
      reauthorized = true;
      log::Info(kBatchLog, "the access token was rejected (401); getting a fresh one, once");
      continue;
    }
    if (answer->status != 200) RedactSecrets(answer->body, secrets);
    return answer;
  }
}

}  // namespace imgmcp::gemini
