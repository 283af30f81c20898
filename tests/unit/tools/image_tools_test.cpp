// ImageTools with a real SQLite store and the local engine behind a gate: the tools cap how many
// backend calls run at once across sessions (--max-backend-calls).
#include "server/tools/image_tools.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "local_backend/local_backend.h"
#include "session/sqlite/sqlite_session_store.h"
#include "tests/unit/temp_dir.h"

namespace imgmcp::tools {
namespace {

using test_util::TempDir;

constexpr auto kWait = std::chrono::seconds(20);  // bound for waits that should succeed quickly

// The local engine, holding every call until `target` calls are inside at once (or kWait).
class GatedBackend final : public imaging::ImageBackend {
 public:
  explicit GatedBackend(int target) : target_(target) {}
  std::string Name() const override { return "local"; }
  std::string Model() const override { return "gated"; }
  const std::vector<imaging::ModelCapabilities>& Models() const override {
    static const std::vector<imaging::ModelCapabilities> kModels = [] {
      imaging::ModelCapabilities m = local::LocalBackend().Models().front();
      m.id = "gated";
      return std::vector<imaging::ModelCapabilities>{m};
    }();
    return kModels;
  }
  Result<imaging::BackendImage> Generate(const imaging::GenerateRequest& request,
                                         const imaging::CallContext& ctx) override {
    {
      std::unique_lock lock(mu_);
      max_inside_ = std::max(max_inside_, ++inside_);
      changed_.notify_all();
      changed_.wait_for(lock, kWait, [&] { return max_inside_ >= target_; });
      --inside_;
    }
    return local_.Generate(request, ctx);
  }
  Result<imaging::BackendImage> Edit(const imaging::EditRequest& request,
                                     const imaging::CallContext& ctx) override {
    return local_.Edit(request, ctx);
  }
  int max_inside() {
    std::lock_guard lock(mu_);
    return max_inside_;
  }

 private:
  const int target_;
  local::LocalBackend local_;
  std::mutex mu_;  // guards inside_, max_inside_
  std::condition_variable changed_;
  int inside_ = 0;
  int max_inside_ = 0;
};

class QuietContext final : public mcp::ToolCallContext {
 public:
  bool HasProgressToken() const override { return false; }
  void ReportProgress(double, std::optional<double>, const std::string&) override {}
  void Log(mcp::LogLevel, const std::string&, const Json&) override {}
  std::stop_token Cancellation() const override { return cancel_.get_token(); }
  std::string ProtocolVersion() const override { return "2025-11-25"; }
  Result<Json> SendRequest(const std::string&, const Json&) override {
    return Error(ErrorCode::kUnsupported, "no client");
  }

 private:
  std::stop_source cancel_;
};

TEST(ImageToolsTest, BackendCallsAreCappedAcrossSessions) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  SystemClock clock;
  session::StoreOptions store_options;
  store_options.data_dir = tmp.path();
  auto store = session::sqlite::SqliteSessionStore::Open(store_options, clock);
  ASSERT_TRUE(store.ok()) << store.error().message;
  GatedBackend backend(/*target=*/3);
  ImageInputResolver inputs(ImageInputOptions{});
  ImageToolsOptions options;
  options.max_concurrent_backend_calls = 3;
  ImageTools tools(**store, backend, inputs, nullptr, options);

  std::vector<std::thread> threads;
  std::mutex mu;  // guards failures
  std::vector<std::string> failures;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      QuietContext ctx;
      GenerateImageArgs args;
      args.prompt = "solid red";
      args.session_id = "s" + std::to_string(i);
      args.inline_mode = InlineMode::kNone;
      mcp::ToolResult r = tools.GenerateImage(args, ctx);
      if (r.is_error) {
        std::lock_guard lock(mu);
        failures.push_back(r.content.dump());
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_TRUE(failures.empty()) << failures.front();
  EXPECT_EQ(backend.max_inside(), 3);
}

// The text of a tool's result (its first content block).
std::string TextOf(const mcp::ToolResult& result) {
  return result.content.empty() ? "" : result.content[0].value("text", "");
}

TEST(ImageToolsTest, AGenerationIsLeasedWhatItWillHoldBeforeTheBackendRuns) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  SystemClock clock;
  session::StoreOptions store_options;
  store_options.data_dir = tmp.path();
  auto store = session::sqlite::SqliteSessionStore::Open(store_options, clock);
  ASSERT_TRUE(store.ok()) << store.error().message;
  ImageInputResolver inputs(ImageInputOptions{});
  ImageToolsOptions options;
  options.max_inflight_bytes = size_t{64} << 20;
  QuietContext ctx;
  GenerateImageArgs args;
  args.prompt = "a lighthouse";
  args.session_id = "big";
  args.inline_mode = InlineMode::kNone;
  args.generation.image_size = "4K";
  {
    // The local engine: a 4096x4096 frame and its PNG, about 129 MB.
    local::LocalBackend engine;
    ImageTools tools(**store, engine, inputs, nullptr, options);
    const mcp::ToolResult refused = tools.GenerateImage(args, ctx);
    ASSERT_TRUE(refused.is_error);
    EXPECT_NE(TextOf(refused).find("(making a 4096x4096 image) needs about 129 MB"),
              std::string::npos)
        << TextOf(refused);
    args.generation.image_size = "1K";
    const mcp::ToolResult made = tools.GenerateImage(args, ctx);
    EXPECT_FALSE(made.is_error) << TextOf(made);
  }
  // Any other backend: the allowance for the answer, about 12 MB for a 1K image.
  GatedBackend remote(/*target=*/1);
  options.max_inflight_bytes = size_t{8} << 20;
  ImageTools tools(**store, remote, inputs, nullptr, options);
  args.session_id = "answer";
  const mcp::ToolResult refused = tools.GenerateImage(args, ctx);
  ASSERT_TRUE(refused.is_error);
  EXPECT_NE(TextOf(refused).find("needs about 12 MB"), std::string::npos) << TextOf(refused);
  EXPECT_EQ(remote.max_inside(), 0);  // the backend was never called
}

// The local engine offering one model with a batch price (as the Gemini table's rows have).
class BatchPricedBackend final : public imaging::ImageBackend {
 public:
  std::string Name() const override { return "gemini"; }
  std::string Model() const override { return "batchable"; }
  const std::vector<imaging::ModelCapabilities>& Models() const override {
    static const std::vector<imaging::ModelCapabilities> kModels = [] {
      imaging::ModelCapabilities m = local::LocalBackend().Models().front();
      m.id = "batchable";
      m.prices.input_text = 1;
      m.prices.output_image = 30;
      m.batch_price_factor = 0.5;
      return std::vector<imaging::ModelCapabilities>{m};
    }();
    return kModels;
  }
  Result<imaging::BackendImage> Generate(const imaging::GenerateRequest& request,
                                         const imaging::CallContext& ctx) override {
    ++calls;
    return local_.Generate(request, ctx);
  }
  Result<imaging::BackendImage> Edit(const imaging::EditRequest& request,
                                     const imaging::CallContext& ctx) override {
    return local_.Edit(request, ctx);
  }
  std::atomic<int> calls{0};

 private:
  local::LocalBackend local_;
};

// A call running as the task `task_id`, wanted until `cancelled` is set.
class TaskContext final : public mcp::ToolCallContext {
 public:
  explicit TaskContext(std::string task_id) : task_id_(std::move(task_id)) {}
  bool HasProgressToken() const override { return false; }
  void ReportProgress(double, std::optional<double>, const std::string&) override {}
  void Log(mcp::LogLevel, const std::string&, const Json&) override {}
  std::stop_token Cancellation() const override { return {}; }
  std::string ProtocolVersion() const override { return "2026-07-28"; }
  Result<Json> SendRequest(const std::string&, const Json&) override {
    return Error(ErrorCode::kUnsupported, "no client");
  }
  std::string TaskId() const override { return task_id_; }
  Status TaskStillWanted() override {
    if (!cancelled) return Status::Ok();
    return MakeError(ErrorCode::kCancelled, "task " + task_id_ + " was cancelled");
  }
  bool cancelled = false;

 private:
  const std::string task_id_;
};

// Keeps what the tools record in the audit trail.
class RecordingAudit final : public mcp::AuditTrail {
 public:
  void Record(const mcp::AuditEntry& entry) override {
    std::lock_guard lock(mu_);
    entries_.push_back(entry);
  }
  std::vector<mcp::AuditEntry> entries() {
    std::lock_guard lock(mu_);
    return entries_;
  }

 private:
  std::mutex mu_;  // guards entries_
  std::vector<mcp::AuditEntry> entries_;
};

class BatchDeliveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    session::StoreOptions store_options;
    store_options.data_dir = tmp_.path();
    auto store = session::sqlite::SqliteSessionStore::Open(store_options, clock_);
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(*store);
  }
  std::unique_ptr<ImageTools> Tools(std::string refusal) {
    ImageToolsOptions options;
    options.batch_refusal = std::move(refusal);
    options.batch_window = std::chrono::seconds(7);
    options.audit = &audit_;
    return std::make_unique<ImageTools>(*store_, backend_, inputs_, nullptr, options);
  }
  static GenerateImageArgs Batch(const std::string& session_id) {
    GenerateImageArgs args;
    args.prompt = "a lighthouse";
    args.session_id = session_id;
    args.inline_mode = InlineMode::kNone;
    args.delivery = "batch";
    return args;
  }

  TempDir tmp_;
  SystemClock clock_;
  std::unique_ptr<session::sqlite::SqliteSessionStore> store_;
  BatchPricedBackend backend_;
  ImageInputResolver inputs_{ImageInputOptions{}};
  RecordingAudit audit_;
};

TEST_F(BatchDeliveryTest, ABatchCallIsCheckedThenHandedOffWithoutCallingTheBackend) {
  auto tools = Tools("");
  QuietContext direct;
  mcp::ToolResult refused = tools->GenerateImage(Batch("b1"), direct);
  ASSERT_TRUE(refused.is_error);
  EXPECT_NE(TextOf(refused).find("needs a task-capable client"), std::string::npos)
      << TextOf(refused);
  TaskContext task("t1");
  GenerateImageArgs with_reference = Batch("b1");
  with_reference.reference_images.emplace_back();
  EXPECT_NE(TextOf(tools->GenerateImage(with_reference, task)).find("takes no reference_images"),
            std::string::npos);
  GenerateImageArgs with_key = Batch("b1");
  with_key.idempotency_key = "k1";
  EXPECT_NE(TextOf(tools->GenerateImage(with_key, task)).find("takes no idempotency_key"),
            std::string::npos);

  mcp::ToolResult handed = tools->GenerateImage(Batch("b1"), task);
  ASSERT_FALSE(handed.is_error) << TextOf(handed);
  ASSERT_TRUE(handed.handed_off);
  EXPECT_EQ(*handed.handed_off,
            "waiting for the batch window (7 s), then one Gemini batch job "
            "with the calls that came meanwhile");
  EXPECT_EQ(backend_.calls, 0);
  EXPECT_FALSE(store_->GetVersion("b1", std::nullopt).ok()) << "nothing committed";

  auto local_only = Tools("delivery \"batch\" needs the Gemini API backend");
  EXPECT_NE(TextOf(local_only->GenerateImage(Batch("b1"), task)).find("needs the Gemini API"),
            std::string::npos);
}

// The answer commits as an immediate call's would, priced at the batch factor, once: a commit
// retried with the same task finds the first; a cancelled task commits nothing.
TEST_F(BatchDeliveryTest, ABatchAnswerCommitsOnceAtTheBatchPrice) {
  auto tools = Tools("");
  imaging::GenerateRequest request;
  request.prompt = "a lighthouse";
  auto answer = backend_.Generate(request, {});
  ASSERT_TRUE(answer.ok());
  answer->usage =
      Json{{"promptTokenCount", 1000},
           {"candidatesTokenCount", 1000},
           {"candidatesTokensDetails", {{{"modality", "IMAGE"}, {"tokenCount", 1000}}}}};
  answer->price_factor = 0.5;
  TaskContext task("t2");
  mcp::ToolResult committed = tools->CommitBatchAnswer(Batch("b2"), task, answer);
  ASSERT_FALSE(committed.is_error) << TextOf(committed);
  const Json& cost = (*committed.structured_content)["cost"];
  EXPECT_EQ(cost["price_factor"], 0.5) << cost.dump();
  EXPECT_NEAR(cost["usd"].get<double>(), 0.5 * (1000 * 1 + 1000 * 30) / 1e6, 1e-12) << cost.dump();
  EXPECT_EQ((*committed.structured_content)["version"], 1);
  // The commit is the call's write: the audit trail has it, with its task and cost.
  const std::vector<mcp::AuditEntry> audited = audit_.entries();
  ASSERT_EQ(audited.size(), 1u);
  EXPECT_EQ(audited[0].task_id, "t2");
  EXPECT_EQ(audited[0].session_id, "b2");
  EXPECT_EQ(audited[0].version, 1);
  EXPECT_EQ(audited[0].outcome, "ok");
  EXPECT_NEAR(audited[0].cost_usd, cost["usd"].get<double>(), 1e-12);

  mcp::ToolResult again = tools->CommitBatchAnswer(Batch("b2"), task, answer);
  ASSERT_FALSE(again.is_error) << TextOf(again);
  EXPECT_EQ((*again.structured_content)["version"], 1);
  EXPECT_EQ((*again.structured_content)["repeated"], true);

  TaskContext cancelled("t3");
  cancelled.cancelled = true;
  mcp::ToolResult dropped = tools->CommitBatchAnswer(Batch("b3"), cancelled, answer);
  EXPECT_TRUE(dropped.is_error);
  EXPECT_FALSE(store_->GetVersion("b3", std::nullopt).ok()) << "nothing committed";
}

TEST(ImageToolsTest, TheDefaultCapIsTheFlagsDefault) {
  EXPECT_EQ(ImageToolsOptions{}.max_concurrent_backend_calls, kDefaultMaxConcurrentBackendCalls);
}

}  // namespace
}  // namespace imgmcp::tools
