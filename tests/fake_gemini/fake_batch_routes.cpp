// FakeGeminiServer's Batch API routes (fake_gemini_server.h): job creation with inlined requests,
// reads and cancels, each logged like a generateContent call.
#include <httplib.h>

#include "tests/fake_gemini/fake_gemini_server.h"
#include "tests/fake_gemini/fake_wire.h"

namespace imgmcp::fake_gemini {
namespace {

// The google.rpc.Code an HTTP status stands for, as a batch answer's error carries it.
int RpcCodeOfHttpStatus(int status) {
  switch (status) {
    case 400:
      return 3;
    case 401:
      return 16;
    case 403:
      return 7;
    case 404:
      return 5;
    case 429:
      return 8;
    case 503:
      return 14;
    case 504:
      return 4;
    default:
      return 13;
  }
}

std::string ApiKey(const httplib::Request& req) {
  if (req.has_header("x-goog-api-key")) return req.get_header_value("x-goog-api-key");
  return req.has_param("key") ? req.get_param_value("key") : "";
}

}  // namespace

void FakeGeminiServer::RegisterBatchRoutes() {
  server_->Post(
      R"(/(v1|v1beta|v1alpha)/models/([^/:]+):batchGenerateContent)",
      [this](const httplib::Request& req, httplib::Response& res) { HandleBatchCreate(req, res); });
  server_->Get(
      R"(/(v1|v1beta|v1alpha)/batches)",
      [this](const httplib::Request& req, httplib::Response& res) { HandleBatchList(req, res); });
  server_->Get(R"(/(v1|v1beta|v1alpha)/batches/([^/:]+))",
               [this](const httplib::Request& req, httplib::Response& res) {
                 HandleBatchJob(req, res, false);
               });
  server_->Post(R"(/(v1|v1beta|v1alpha)/batches/([^/:]+):cancel)",
                [this](const httplib::Request& req, httplib::Response& res) {
                  HandleBatchJob(req, res, true);
                });
}

std::optional<FakeGeminiServer::LogSlot> FakeGeminiServer::AdmitBatchCall(
    const httplib::Request& req, httplib::Response& res, const std::string& rpc,
    const Json& extra) {
  const std::string key = ApiKey(req);
  Json entry = {{"method", req.method},
                {"path", req.path},
                {"target", req.target},
                {"api_version", std::string(req.matches[1])},
                {"rpc", rpc},
                {"api_key_present", !key.empty()},
                {"api", "gemini"},
                {"body_bytes", req.body.size()},
                {"response_status", nullptr}};
  for (const auto& [k, v] : extra.items()) entry[k] = v;
  LogSlot slot;
  std::string invalid_key;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    log_.push_back(std::move(entry));
    slot = LogSlot{log_epoch_, log_.size() - 1};
    invalid_key = options_.invalid_key;
  }
  changed_.notify_all();
  if (key.empty()) {
    res.status = 403;
    res.set_content(
        ErrorBody(403, "Method doesn't allow unregistered callers.", "PERMISSION_DENIED"), kJson);
  } else if (key == invalid_key) {
    res.status = 400;
    res.set_content(
        ErrorBody(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT"),
        kJson);
  } else {
    return slot;
  }
  SetStatus(slot, res.status);
  return std::nullopt;
}

Json FakeGeminiServer::AnswerBatchItem(const std::string& model, const std::string& key,
                                       const Json& request, const FakeGeminiOptions& options) {
  Action action;
  LogSlot slot;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    log_.push_back({{"method", "BATCH"},
                    {"rpc", "batchGenerateContent"},
                    {"model", model},
                    {"batch_key", key},
                    {"api", "gemini"},
                    {"action", nullptr},
                    {"response_status", nullptr}});
    slot = LogSlot{log_epoch_, log_.size() - 1};
    if (!script_.empty()) {
      action = std::move(script_.front());
      script_.pop_front();
      AnnotateLocked(slot, {{"action", ActionToJson(action)}});
    }
  }
  changed_.notify_all();
  Answer answer = AnswerRequest(model, request.dump(), action, options, slot);
  SetStatus(slot, answer.status);
  Json out = {{"metadata", {{"key", key}}}};
  if (answer.status == 200) {
    out["response"] = Json::parse(answer.body);
  } else {
    const Json error = Json::parse(answer.body, nullptr, false);
    const Json detail = error.is_object() ? error.value("error", Json::object()) : Json();
    out["error"] = {{"code", RpcCodeOfHttpStatus(answer.status)},
                    {"message", detail.is_object() ? detail.value("message", "") : ""},
                    {"status", detail.is_object() ? detail.value("status", "") : ""}};
  }
  return out;
}

void FakeGeminiServer::HandleBatchCreate(const httplib::Request& req, httplib::Response& res) {
  std::string model = req.matches[2];
  const std::optional<LogSlot> call =
      AdmitBatchCall(req, res, "batches.create", {{"model", model}});
  if (!call) return;
  auto refuse = [&](int status, const std::string& message) {
    res.status = status;
    res.set_content(ErrorBody(status, message, DefaultApiStatus(status)), kJson);
    SetStatus(*call, status);
  };
  FakeGeminiOptions options;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    options = options_;
  }
  if (auto as = options.serve_as.find(model); as != options.serve_as.end()) model = as->second;
  if (!IsKnownModel(model)) return refuse(404, "models/" + model + " is not found");
  const Json body = Json::parse(req.body, nullptr, false);
  // batch.input_config.requests.requests, found in place (no copy outlives this function).
  const Json* requests = &body;
  for (const char* key : {"batch", "input_config", "requests", "requests"}) {
    requests = requests->is_object() && requests->contains(key) ? &(*requests)[key] : nullptr;
    if (requests == nullptr) break;
  }
  if (requests != nullptr && !requests->is_array()) requests = nullptr;
  if (requests == nullptr || requests->empty()) {
    return refuse(400, "batch.input_config.requests.requests must be a non-empty list");
  }
  Json answers = Json::array();
  for (const Json& item : *requests) {
    const Json meta = item.is_object() ? item.value("metadata", Json::object()) : Json();
    const std::string key = meta.is_object() ? meta.value("key", "") : "";
    if (!item.is_object() || !item.contains("request") || key.empty()) {
      return refuse(400, "each inlined request needs request and metadata.key");
    }
    answers.push_back(AnswerBatchItem(model, key, item["request"], options));
  }
  const std::string display = body["batch"].value("display_name", "");
  res.status = 200;
  SetStatus(*call, 200);
  res.set_content(batches_.Create(model, display, std::move(answers), options.batch_states).dump(),
                  kJson);
}

void FakeGeminiServer::HandleBatchJob(const httplib::Request& req, httplib::Response& res,
                                      bool cancel) {
  const std::string id = req.matches[2];
  const std::optional<LogSlot> call = AdmitBatchCall(
      req, res, cancel ? "batches.cancel" : "batches.get", {{"batch", "batches/" + id}});
  if (!call) return;
  std::optional<Json> op = cancel ? batches_.Cancel(id) : batches_.Read(id);
  if (!op) {
    res.status = 404;
    res.set_content(ErrorBody(404, "batches/" + id + " is not found", "NOT_FOUND"), kJson);
  } else {
    res.status = 200;
    res.set_content(op->dump(), kJson);
  }
  SetStatus(*call, res.status);
}

void FakeGeminiServer::HandleBatchList(const httplib::Request& req, httplib::Response& res) {
  const std::optional<LogSlot> call = AdmitBatchCall(req, res, "batches.list", Json::object());
  if (!call) return;
  size_t page_size = 50;
  if (req.has_param("pageSize")) {
    const std::string text = req.get_param_value("pageSize");
    page_size =
        text.empty() || text.size() > 4 || text.find_first_not_of("0123456789") != std::string::npos
            ? 0
            : std::stoul(text);
  }
  if (page_size == 0 || page_size > 1000) {
    res.status = 400;
    res.set_content(ErrorBody(400, "pageSize must be 1-1000", "INVALID_ARGUMENT"), kJson);
  } else {
    res.status = 200;
    res.set_content(batches_.ListOperations(page_size, req.get_param_value("pageToken")).dump(),
                    kJson);
  }
  SetStatus(*call, res.status);
}

}  // namespace imgmcp::fake_gemini
