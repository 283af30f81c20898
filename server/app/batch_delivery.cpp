#include "server/app/batch_delivery.h"

#include <utility>

#include "common/log.h"
#include "gemini_client/wire_format.h"
#include "mcp/json_rpc.h"
#include "mcp/tool_registry.h"
#include "session/chain_store.h"
#include "session/task_records.h"

namespace imgmcp::app {
namespace {

constexpr char kBatchLog[] = "batch";

// What the commit of a batch answer can do as a tool call: it is its task's (TaskId: the commit
// claims the task's row, so a cancelled task commits nothing), on behalf of the task's caller,
// with no client listening.
class BatchCommitContext final : public mcp::ToolCallContext {
 public:
  BatchCommitContext(session::SessionStore& store, const session::TaskRecord& task,
                     mcp::Caller caller)
      : store_(store), task_(task), caller_(std::move(caller)) {}

  bool HasProgressToken() const override { return false; }
  void ReportProgress(double, std::optional<double>, const std::string&) override {}
  void Log(mcp::LogLevel, const std::string&, const Json&) override {}
  std::stop_token Cancellation() const override { return {}; }
  std::string ProtocolVersion() const override { return {}; }
  Result<Json> SendRequest(const std::string& method, const Json&) override {
    return MakeError(ErrorCode::kUnsupported, "a batch commit cannot send " + method);
  }
  std::string TaskId() const override { return task_.task_id; }
  Status TaskStillWanted() override {
    auto row = store_.GetTask(task_.task_id, task_.owner);
    if (row.ok() && row->has_value() && session::IsTerminal((*row)->status)) {
      return MakeError(ErrorCode::kCancelled, "task " + task_.task_id + " was cancelled");
    }
    return Status::Ok();
  }
  const mcp::Caller& caller() const override { return caller_; }

 private:
  session::SessionStore& store_;
  const session::TaskRecord& task_;
  const mcp::Caller caller_;
};

}  // namespace

struct BatchDelivery::Call {
  tools::GenerateImageArgs args;
  const imaging::ModelCapabilities* model = nullptr;
  mcp::Caller caller;
};

BatchDelivery::BatchDelivery(BatchDeliveryParts parts) : parts_(std::move(parts)) {}

BatchDelivery::~BatchDelivery() {
  if (thread_.joinable()) {
    thread_.request_stop();
    wake_.notify_all();
    thread_.join();
  }
}

void BatchDelivery::Start(session::SessionStore& opened) {
  auto* chain = dynamic_cast<session::ChainStore*>(&opened);
  MutexLock lock(mu_);
  if (started_) return;
  started_ = true;
  if (chain == nullptr) {
    log::Warn(kBatchLog, "this session store keeps no batch tasks: batch calls wait unanswered");
    return;
  }
  poller_ = std::make_unique<BatchPoller>(chain->batch_tasks(), *parts_.client, *this, parts_.clock,
                                          parts_.options);
  thread_ = std::jthread([this](std::stop_token stop) { Loop(stop); });
}

void BatchDelivery::Loop(std::stop_token stop) {
  while (!stop.stop_requested()) {
    Status round = poller_->RunOnce(stop);
    if (!round.ok()) log::Warn(kBatchLog, "batch poll: " + round.error().message);
    MutexLock lock(mu_);
    wake_.wait_for(lock, stop, parts_.tick, [] { return false; });
  }
}

Result<BatchDelivery::Call> BatchDelivery::Read(const session::TaskRecord& task) const {
  const Json request = Json::parse(task.request_json, nullptr, /*allow_exceptions=*/false);
  if (!request.is_object() || !request.contains("arguments")) {
    return MakeError(ErrorCode::kDataLoss, "the task's stored call cannot be read");
  }
  Call call;
  ASSIGN_OR_RETURN(call.args, tools::ParseArguments<tools::GenerateImageArgs>(
                                  request["arguments"], parts_.tools.argument_options()));
  call.model = imaging::FindModel(parts_.backend.Models(), task.batch_model);
  if (call.model == nullptr || call.model->batch_price_factor <= 0) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "model " + task.batch_model + " takes no batch delivery on this server");
  }
  call.caller.owner = task.owner;
  call.caller.principal = request.value("principal", "");
  return call;
}

Result<std::string> BatchDelivery::RequestBody(const session::TaskRecord& task) {
  ASSIGN_OR_RETURN(Call call, Read(task));
  imaging::GenerateRequest request;
  request.prompt = call.args.prompt;
  request.options = call.args.Options();
  request.options.model = call.model->id;
  return gemini::BuildGenerateRequest(request, *call.model);
}

void BatchDelivery::Finish(const session::TaskRecord& task,
                           const Result<gemini::BatchAnswer>& answer) {
  if (!answer.ok()) return Fail(task, answer.error());
  Result<Call> call = Read(task);
  if (!call.ok()) return Fail(task, call.error());
  Result<imaging::BackendImage> image =
      gemini::ParseGenerateResponse(answer->http_status, answer->body);
  if (!image.ok()) return Fail(task, image.error());  // the request's own error
  image->price_factor = call->model->batch_price_factor;
  BatchCommitContext ctx(parts_.store, task, call->caller);
  mcp::ToolResult result = parts_.tools.CommitBatchAnswer(call->args, ctx, image);
  auto ended = parts_.ledger.Set(task.task_id, task.owner, mcp::TaskState::kCompleted,
                                 mcp::ToolResultToJson(std::move(result)));
  if (!ended.ok()) {
    log::Info(kBatchLog, "task " + task.task_id + " not completed: " + ended.error().message);
  }
}

void BatchDelivery::Fail(const session::TaskRecord& task, const Error& error) {
  const Json json = {{"code", mcp::rpc_error::kInternalError},
                     {"message", "generate_image (delivery \"batch\") failed: " + error.message}};
  auto ended = parts_.ledger.Set(task.task_id, task.owner, mcp::TaskState::kFailed, json);
  if (!ended.ok()) {
    log::Info(kBatchLog, "task " + task.task_id + " not failed: " + ended.error().message);
  }
}

void BatchDelivery::Progress(const session::TaskRecord& task, const std::string& message) {
  session::TaskUpdate update;
  update.task_id = task.task_id;
  update.owner = task.owner;
  update.status = session::TaskStatus::kWorking;
  update.status_message = message;
  if (auto updated = parts_.store.UpdateTask(update); !updated.ok()) {
    log::Info(kBatchLog, "task " + task.task_id + ": " + updated.error().message);
  }
}

}  // namespace imgmcp::app
