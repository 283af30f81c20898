// ImageTools with a real SQLite store and the local engine behind a gate: the tools cap how many
// backend calls run at once across sessions (--max-backend-calls).
#include "server/tools/image_tools.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
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

TEST(ImageToolsTest, TheDefaultCapIsTheFlagsDefault) {
  EXPECT_EQ(ImageToolsOptions{}.max_concurrent_backend_calls, kDefaultMaxConcurrentBackendCalls);
}

}  // namespace
}  // namespace imgmcp::tools
