// GeminiClient against the in-process FakeGeminiServer on an OS-chosen 127.0.0.1 port.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <future>
#include <mutex>
#include <stop_token>
#include <thread>

#include "common/json.h"
#include "gemini_client/gemini_client.h"
#include "gemini_client/models.h"
#include "imaging/codec.h"
#include "metrics/prometheus_metrics.h"
#include "tests/fake_gemini/fake_gemini_server.h"
#include "tests/unit/gemini_client/test_images.h"

namespace imgmcp::gemini {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr char kKey[] = "test-key-S3CRET-do-not-leak-4711";

// Records every wait and advances its clock instantly; wakes (false) if already cancelled.
class FakeSleeper final : public Sleeper {
 public:
  steady_clock::time_point Now() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return steady_clock::now() + offset_;
  }
  bool SleepFor(milliseconds d, std::stop_token cancel) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cancel.stop_requested()) return false;
    sleeps_.push_back(d);
    offset_ += d;
    return true;
  }
  std::vector<milliseconds> sleeps() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return sleeps_;
  }

 private:
  mutable std::mutex mutex_;  // guards offset_ and sleeps_
  steady_clock::duration offset_{0};
  std::vector<milliseconds> sleeps_;
};

class GeminiClientFakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto port = server_.Start("127.0.0.1", 0);
    ASSERT_TRUE(port.ok()) << port.error().message;
    sleeper_ = std::make_shared<FakeSleeper>();
    options_.api_key = kKey;
    options_.base_url = server_.base_url();
    options_.retry.jitter_fraction = 0;
  }

  std::unique_ptr<GeminiClient> MakeClient(std::shared_ptr<Sleeper> sleeper = nullptr) {
    auto client = GeminiClient::Create(options_, &PostJson, sleeper ? sleeper : sleeper_);
    EXPECT_TRUE(client.ok()) << client.error().message;
    return client.ok() ? std::move(client).value() : nullptr;
  }

  void Script(const std::string& json) { ASSERT_TRUE(server_.PushScript(Json::parse(json)).ok()); }

  Result<imaging::BackendImage> Generate(GeminiClient& client, const std::string& prompt,
                                         imaging::CallContext ctx = {},
                                         const std::string& ratio = "1:1") {
    imaging::GenerateRequest req;
    req.prompt = prompt;
    req.options.aspect_ratio = ratio;
    auto r = client.Generate(req, ctx);
    if (!r.ok()) messages_.push_back(r.error().message);
    return r;
  }

  fake_gemini::FakeGeminiServer server_;
  std::shared_ptr<FakeSleeper> sleeper_;
  GeminiClientOptions options_;
  std::vector<std::string> messages_;  // every error message seen, for the key-leak check
};

std::array<uint8_t, 4> PixelAt(const std::string& bytes, int x, int y) {
  auto image = imaging::Decode(bytes);
  EXPECT_TRUE(image.ok());
  if (!image.ok()) return {};
  const uint8_t* p = image->Pixel(x, y);
  return {p[0], p[1], p[2], p[3]};
}

TEST_F(GeminiClientFakeTest, GeneratesWithTheRightWireShape) {
  auto client = MakeClient();
  auto image = Generate(*client, "solid red", {}, "16:9");
  ASSERT_TRUE(image.ok()) << image.error().message;
  EXPECT_EQ(image->mime_type, "image/png");
  auto info = imaging::ReadImageInfo(image->bytes);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->width, 1344);
  EXPECT_EQ(info->height, 768);
  EXPECT_EQ(PixelAt(image->bytes, 10, 10), (std::array<uint8_t, 4>{255, 0, 0, 255}));

  const Json log = server_.Requests();
  ASSERT_EQ(log.size(), 1u);
  const Json& r = log[0];
  EXPECT_EQ(r["path"], "/v1beta/models/gemini-3.1-flash-lite-image:generateContent");
  EXPECT_EQ(r["target"], r["path"]);  // no query string at all: the key is not in the URL
  EXPECT_EQ(r["api_key_source"], "header");
  EXPECT_EQ(r["api_key"], kKey);
  EXPECT_EQ(r["headers"]["content-type"], "application/json");
  EXPECT_EQ(r["response_status"], 200);
  EXPECT_EQ(r["body"]["generationConfig"]["imageConfig"]["aspectRatio"], "16:9");
  EXPECT_EQ(r["body"]["contents"][0]["parts"][0]["text"], "solid red");
}

TEST_F(GeminiClientFakeTest, EditReallyAppliesToTheSentImage) {
  auto client = MakeClient();
  auto red = Generate(*client, "solid red");
  ASSERT_TRUE(red.ok()) << red.error().message;
  imaging::EditRequest edit;
  edit.prompt = "invert";
  edit.base = {red->bytes, red->mime_type};
  auto cyan = client->Edit(edit, {});
  ASSERT_TRUE(cyan.ok()) << cyan.error().message;
  EXPECT_EQ(PixelAt(cyan->bytes, 5, 5), (std::array<uint8_t, 4>{0, 255, 255, 255}));
  const Json log = server_.Requests();
  ASSERT_EQ(log.size(), 2u);
  ASSERT_EQ(log[1]["images"].size(), 1u);
  EXPECT_EQ(log[1]["images"][0]["declared_mime_type"], "image/png");
  EXPECT_EQ(log[1]["images"][0]["sniffed_mime_type"], "image/png");
  EXPECT_FALSE(log[1]["body"]["generationConfig"].contains("imageConfig"));
}

TEST_F(GeminiClientFakeTest, RetriesTransientStatusesWithProgress) {
  Script(R"([{"status":503},{"status":503}])");
  auto client = MakeClient();
  std::vector<std::string> progress;
  imaging::CallContext ctx;
  ctx.on_progress = [&](const std::string& m) { progress.push_back(m); };
  auto image = Generate(*client, "solid blue", ctx);
  ASSERT_TRUE(image.ok()) << image.error().message;
  EXPECT_EQ(server_.RequestCount(), 3u);
  ASSERT_EQ(progress.size(), 2u);
  EXPECT_EQ(progress[0], "Gemini returned 503 (UNAVAILABLE); retrying in 1 s (attempt 2 of 5)");
  EXPECT_EQ(progress[1], "Gemini returned 503 (UNAVAILABLE); retrying in 2 s (attempt 3 of 5)");
  EXPECT_EQ(sleeper_->sleeps(),
            (std::vector<milliseconds>{milliseconds(1000), milliseconds(2000)}));
}

TEST_F(GeminiClientFakeTest, HonoursRetryInfoOn429) {
  Script(R"([{"status":429,"retry_delay":"7.25s"}])");
  auto client = MakeClient();
  std::vector<std::string> progress;
  imaging::CallContext ctx;
  ctx.on_progress = [&](const std::string& m) { progress.push_back(m); };
  auto image = Generate(*client, "solid green", ctx);
  ASSERT_TRUE(image.ok()) << image.error().message;
  ASSERT_EQ(sleeper_->sleeps().size(), 1u);
  EXPECT_GE(sleeper_->sleeps()[0], milliseconds(7250));
  ASSERT_EQ(progress.size(), 1u);
  EXPECT_EQ(progress[0],
            "Gemini returned 429 (RESOURCE_EXHAUSTED); retrying in 7.3 s (attempt 2 of 5)");
}

TEST_F(GeminiClientFakeTest, RetriesA429WithoutDetailsWithBackoff) {
  Script(R"([{"status":429},{"status":500},{"status":504},{"status":408}])");
  auto client = MakeClient();
  auto image = Generate(*client, "solid green");
  ASSERT_TRUE(image.ok()) << image.error().message;
  EXPECT_EQ(server_.RequestCount(), 5u);
  EXPECT_EQ(sleeper_->sleeps().size(), 4u);
}

// The retry metric's causes, one series each; the call counted once, as a success.
TEST_F(GeminiClientFakeTest, CountsCallsAndRetriesByCauseInTheMetrics) {
  const std::unique_ptr<metrics::Metrics> owned = metrics::NewPrometheusMetrics();
  metrics::Metrics& metrics = *owned;
  options_.metrics = &metrics;
  Script(R"([{"status":429},{"status":500},{"status":504},{"status":408}])");
  auto client = MakeClient();
  ASSERT_TRUE(Generate(*client, "solid green").ok());
  const std::string text = metrics.Render();
  for (const char* line : {
           R"(imgmcp_backend_retries_total{backend="gemini",cause="429"} 1)",
           R"(imgmcp_backend_retries_total{backend="gemini",cause="5xx"} 2)",
           R"(imgmcp_backend_retries_total{backend="gemini",cause="timeout"} 1)",
           R"(imgmcp_backend_calls_total{backend="gemini",outcome="ok"} 1)",
           R"(imgmcp_backend_call_duration_seconds_count{backend="gemini"} 1)",
       }) {
    EXPECT_NE(text.find(std::string(line) + "\n"), std::string::npos) << line << "\n" << text;
  }
  EXPECT_EQ(text.find(kKey), std::string::npos);
}

TEST_F(GeminiClientFakeTest, DailyQuotaAndLongDelaysAreNotRetried) {
  Script(
      R"([{"status":429,"quota_id":"GenerateRequestsPerDayPerProjectPerModel","retry_delay":"20s"},
             {"status":429,"retry_delay":"900s"}])");
  auto client = MakeClient();
  auto daily = Generate(*client, "solid green");
  ASSERT_FALSE(daily.ok());
  EXPECT_EQ(daily.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(daily.error().message.find("daily quota"), std::string::npos) << daily.error().message;
  EXPECT_EQ(server_.RequestCount(), 1u);
  auto long_wait = Generate(*client, "solid green");
  ASSERT_FALSE(long_wait.ok());
  EXPECT_NE(long_wait.error().message.find("asked to wait 900 s"), std::string::npos)
      << long_wait.error().message;
  EXPECT_EQ(server_.RequestCount(), 2u);
  EXPECT_TRUE(sleeper_->sleeps().empty());
}

// The POST seam: whatever function the client is given sends every attempt, and an error that
// is not kUnavailable (the binary's network module could not be loaded) ends the call at once.
std::atomic<int> unloadable_posts{0};
Result<HttpAnswer> UnloadablePost(const Endpoint&, const std::string&, const std::string&,
                                  const std::string&, const HttpCallOptions&, std::stop_token,
                                  steady_clock::time_point, HttpFailure* failure) {
  ++unloadable_posts;
  if (failure != nullptr) *failure = HttpFailure{};
  return MakeError(ErrorCode::kFailedPrecondition, "the network module could not be loaded");
}

TEST_F(GeminiClientFakeTest, SendsThroughTheGivenPostFunctionAndDoesNotRetryItsHardErrors) {
  EXPECT_FALSE(GeminiClient::Create(options_, nullptr).ok());
  auto client = GeminiClient::Create(options_, &UnloadablePost, sleeper_);
  ASSERT_TRUE(client.ok()) << client.error().message;
  unloadable_posts = 0;
  auto r = Generate(**client, "solid red");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(r.error().message.find("the network module could not be loaded"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(unloadable_posts.load(), 1);
  EXPECT_EQ(server_.Requests().size(), 0u);  // the fake was never called
}

TEST_F(GeminiClientFakeTest, ClientErrorsAreNotRetried) {
  Script(
      R"([{"status":400,"message":"Unsupported MIME type: image/jpg"},{"status":403},{"status":402},{"status":404}])");
  auto client = MakeClient();
  const ErrorCode expected[] = {ErrorCode::kInvalidArgument, ErrorCode::kPermissionDenied,
                                ErrorCode::kResourceExhausted, ErrorCode::kNotFound};
  for (ErrorCode code : expected) {
    auto r = Generate(*client, "solid green");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, code) << r.error().message;
  }
  EXPECT_NE(messages_[0].find("Unsupported MIME type: image/jpg"), std::string::npos);
  EXPECT_EQ(server_.RequestCount(), 4u);
  EXPECT_TRUE(sleeper_->sleeps().empty());
}

TEST_F(GeminiClientFakeTest, RejectedKeyAndUnknownModel) {
  ASSERT_TRUE(server_.Configure({{"invalid_key", kKey}}).ok());
  auto client = MakeClient();
  auto r = Generate(*client, "solid red");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(r.error().message.rfind("the Gemini API key was rejected (API_KEY_INVALID); check "
                                    "GEMINI_API_KEY",
                                    0),
            0u);
  server_.Reset();
  options_.model = "gemini-0-nonexistent";
  auto other = MakeClient();
  r = Generate(*other, "solid red");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_NE(r.error().message.find("models/gemini-0-nonexistent is not found"), std::string::npos);
}

TEST_F(GeminiClientFakeTest, EachCallGoesToItsModelAndOnlyAllowedModelsAreCalled) {
  options_.model = "gemini-nano-banana-2.1";
  options_.models = {"gemini-nano-banana-2.1", "gemini-3-pro-image"};
  auto client = MakeClient();
  ASSERT_NE(client, nullptr);
  ASSERT_EQ(client->Models().size(), 2u);
  EXPECT_EQ(client->Models()[0].id, "gemini-nano-banana-2.1");
  imaging::GenerateRequest req;
  req.prompt = "solid red";
  ASSERT_TRUE(client->Generate(req, {}).ok());
  req.options.model = "gemini-3-pro-image";
  req.options.image_size = "2K";
  auto pro = client->Generate(req, {});
  ASSERT_TRUE(pro.ok()) << pro.error().message;
  req.options.model = "gemini-3.1-flash-lite-image";  // known, but not allowed here
  req.options.image_size = "";
  auto refused = client->Generate(req, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message.find("gemini-nano-banana-2.1, gemini-3-pro-image"),
            std::string::npos)
      << refused.error().message;
  const Json log = server_.Requests();
  ASSERT_EQ(log.size(), 2u);  // the refused one never left
  EXPECT_EQ(log[0]["model"], "gemini-nano-banana-2.1");
  EXPECT_EQ(log[1]["model"], "gemini-3-pro-image");
  EXPECT_EQ(log[1]["body"]["generationConfig"]["imageConfig"]["imageSize"], "2K");
  auto info = imaging::ReadImageInfo(pro->bytes);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->width, 2048);

  options_.models = {"gemini-3-pro-image"};  // the default must be allowed
  auto bad = GeminiClient::Create(options_, &PostJson, sleeper_);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("gemini-nano-banana-2.1"), std::string::npos);
}

// A retired model is refused before any request, naming its date and replacement, unless the
// client allows retired models; then it is called like any other.
TEST_F(GeminiClientFakeTest, ARetiredModelIsRefusedUnlessAllowed) {
  options_.model = "gemini-2.5-flash-image";
  auto refused = GeminiClient::Create(options_, &PostJson, sleeper_);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("the default model gemini-2.5-flash-image was retired "
                                         "on 2026-10-02; use gemini-3.1-flash-lite-image instead"),
            std::string::npos)
      << refused.error().message;

  options_.model = "gemini-3.1-flash-lite-image";
  auto client = MakeClient();
  ASSERT_NE(client, nullptr);
  imaging::GenerateRequest req;
  req.prompt = "solid red";
  req.options.model = "gemini-3.1-flash-image";
  auto r = client->Generate(req, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("model gemini-3.1-flash-image was retired on 2026-10-29; use "
                                   "gemini-nano-banana-2.1 instead"),
            std::string::npos)
      << r.error().message;
  EXPECT_NE(client->ModelNote("gemini-3.1-flash-image-preview")
                .find("its replacement gemini-3.1-flash-image is retired too"),
            std::string::npos)
      << client->ModelNote("gemini-3.1-flash-image-preview");
  EXPECT_EQ(server_.RequestCount(), 0u);

  options_.allow_retired = true;
  auto allowed = MakeClient();
  ASSERT_NE(allowed, nullptr);
  EXPECT_EQ(allowed->Models().size(), BuiltInGeminiModels().size());
  auto made = allowed->Generate(req, {});
  ASSERT_TRUE(made.ok()) << made.error().message;
  EXPECT_EQ(server_.Requests()[0]["model"], "gemini-3.1-flash-image");
}

// 3.1 Flash Image (retired; --allow-retired) has every size, 512 too.
TEST_F(GeminiClientFakeTest, SearchSizesAndThinkingComeBackWithSourcesAndUsage) {
  options_.model = "gemini-3.1-flash-image";
  options_.allow_retired = true;
  auto client = MakeClient();
  imaging::GenerateRequest req;
  req.prompt = "solid navy";
  req.options.image_size = "512";
  req.options.aspect_ratio = "1:8";
  req.options.thinking = "high";
  req.options.search = true;
  auto image = client->Generate(req, {});
  ASSERT_TRUE(image.ok()) << image.error().message;
  auto info = imaging::ReadImageInfo(image->bytes);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->width, 192);
  EXPECT_EQ(info->height, 1536);
  EXPECT_EQ(PixelAt(image->bytes, 5, 5), (std::array<uint8_t, 4>{0, 0, 128, 255}));
  ASSERT_EQ(image->sources.size(), 2u);
  EXPECT_EQ(image->sources[0].title, "example.org");
  EXPECT_EQ(image->sources[0].uri.rfind("https://", 0), 0u);
  EXPECT_EQ(image->finish_reason, "STOP");
  EXPECT_EQ(image->text, "Here is the image you asked for.");
  EXPECT_EQ(image->usage["candidatesTokenCount"], 747 + 12);  // a 512 image and the text
  EXPECT_GT(image->usage["thoughtsTokenCount"].get<int>(), 0);
  const Json body = server_.Requests()[0]["body"];
  EXPECT_EQ(body["tools"], Json::parse(R"([{"google_search":{}}])"));
  EXPECT_EQ(body["generationConfig"]["thinkingConfig"]["thinkingLevel"], "HIGH");
}

// Nano Banana 2.1: its sizes, the extreme ratios, its three thinking levels, and usage as the
// real API reports it (image tokens per size, the prompt by modality, thoughts by level).
TEST_F(GeminiClientFakeTest, NanoBananaTakesItsSizesRatiosAndLevels) {
  options_.model = "gemini-nano-banana-2.1";
  auto client = MakeClient();
  ASSERT_NE(client, nullptr);
  imaging::EditRequest edit;
  edit.prompt = "invert";
  edit.base = {testing::SolidPng(64, 8, 255, 0, 0), ""};
  edit.options.image_size = "2K";
  edit.options.thinking = "medium";
  auto image = client->Edit(edit, {});
  ASSERT_TRUE(image.ok()) << image.error().message;
  EXPECT_EQ(image->usage["candidatesTokenCount"], 1680 + 12);
  EXPECT_EQ(image->usage["thoughtsTokenCount"], 120);
  EXPECT_EQ(image->usage["candidatesTokensDetails"],
            Json::parse(R"([{"modality":"IMAGE","tokenCount":1680},
                            {"modality":"TEXT","tokenCount":12}])"));
  EXPECT_EQ(image->usage["promptTokensDetails"], Json::parse(R"([{"modality":"TEXT","tokenCount":2},
                            {"modality":"IMAGE","tokenCount":560}])"));
  EXPECT_EQ(image->usage["promptTokenCount"], 562);
  EXPECT_EQ(server_.Requests()[0]["body"]["generationConfig"]["thinkingConfig"]["thinkingLevel"],
            "MEDIUM");

  imaging::GenerateRequest gen;
  gen.prompt = "solid navy";
  gen.options.aspect_ratio = "8:1";
  gen.options.thinking = "minimal";
  auto wide = client->Generate(gen, {});
  ASSERT_TRUE(wide.ok()) << wide.error().message;
  auto info = imaging::ReadImageInfo(wide->bytes);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->width, 3072);
  EXPECT_EQ(info->height, 384);
  EXPECT_EQ(wide->usage["thoughtsTokenCount"], 24);

  gen.options.image_size = "512";  // not on this model: refused before any request
  auto r = client->Generate(gen, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("does not support image_size 512"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(server_.RequestCount(), 2u);
}

// A chain edit replays the earlier answer with its signatures; the fake verifies each one and
// refuses a replay whose image or signature changed.
TEST_F(GeminiClientFakeTest, ChainEditsReplayAnswersTheFakeCanVerify) {
  options_.model = "gemini-nano-banana-2.1";
  auto client = MakeClient();
  imaging::GenerateRequest gen;
  gen.prompt = "solid red";
  auto first = client->Generate(gen, {});
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_FALSE(first->replay.empty());

  imaging::ChainTurn turn;
  turn.user_text = "solid red";
  turn.replay = first->replay;
  turn.image = {first->bytes, first->mime_type};
  imaging::EditRequest edit;
  edit.prompt = "invert";
  edit.base = turn.image;
  edit.chain = {turn};
  auto second = client->Edit(edit, {});
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(PixelAt(second->bytes, 3, 3), (std::array<uint8_t, 4>{0, 255, 255, 255}));
  Json log = server_.Requests();
  ASSERT_EQ(log.size(), 2u);
  const Json& turns = log[1]["turns"];
  ASSERT_EQ(turns.size(), 3u);
  EXPECT_EQ(turns[1]["role"], "model");
  EXPECT_EQ(turns[1]["signatures"], 2);  // the text part and the image part
  EXPECT_EQ(turns[2]["texts"], Json::array({"invert"}));
  EXPECT_EQ(turns[2]["images"], 0);  // the base travels as the model's own answer

  // The same replay with other image bytes, or without the image's signature, is refused.
  imaging::EditRequest altered = edit;
  altered.chain[0].image.bytes = second->bytes;
  auto r = client->Edit(altered, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("Image part is missing a thought_signature in content "
                                   "position 2, part position 2"),
            std::string::npos)
      << r.error().message;
  Json replay = Json::parse(first->replay);
  replay["parts"][replay["image"].get<size_t>()].erase("thoughtSignature");
  imaging::EditRequest unsigned_edit = edit;
  unsigned_edit.chain[0].replay = replay.dump();
  ASSERT_FALSE(client->Edit(unsigned_edit, {}).ok());
  log = server_.Requests();
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[2]["signature_problem"], "altered");
  EXPECT_EQ(log[3]["signature_problem"], "missing");
  EXPECT_EQ(log[2]["response_status"], 400);
}

TEST_F(GeminiClientFakeTest, GivesUpAfterMaxAttempts) {
  Script(
      R"([{"status":503},{"status":503},{"status":503},{"status":503},{"status":503},{"status":503}])");
  auto client = MakeClient();
  auto r = Generate(*client, "solid red");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(r.error().message.find("gave up after 5 attempts"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(server_.RequestCount(), 5u);
  EXPECT_EQ(sleeper_->sleeps().size(), 4u);
}

TEST_F(GeminiClientFakeTest, NeverWaitsPastTheDeadline) {
  Script(R"([{"status":503},{"status":503},{"status":503},{"status":503},{"status":503}])");
  auto client = MakeClient();
  imaging::CallContext ctx;
  ctx.deadline = sleeper_->Now() + milliseconds(2500);
  auto r = Generate(*client, "solid red", ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kDeadlineExceeded);
  EXPECT_NE(r.error().message.find("after 2 attempts"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("503"), std::string::npos) << r.error().message;
  EXPECT_EQ(server_.RequestCount(), 2u);
  EXPECT_EQ(sleeper_->sleeps(), (std::vector<milliseconds>{milliseconds(1000)}));
}

TEST_F(GeminiClientFakeTest, DeadlineInterruptsASlowAnswer) {
  Script(R"([{"delay_ms":20000}])");
  options_.call_timeout = milliseconds(300);
  auto client = MakeClient(std::make_shared<RealSleeper>());
  const auto start = steady_clock::now();
  auto r = Generate(*client, "solid red");
  const auto elapsed = steady_clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kDeadlineExceeded) << r.error().message;
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

// An upper bound on the time from a cancel to the call's return, generous for a loaded machine:
// cancellation wakes the waits, nothing polls.
constexpr auto kCancelLatency = std::chrono::milliseconds(20);

TEST_F(GeminiClientFakeTest, CancellationDuringBackoffReturnsPromptly) {
  Script(R"([{"status":503}])");
  options_.retry.base_delay = std::chrono::seconds(30);
  options_.retry.max_delay = std::chrono::seconds(60);
  auto client = MakeClient(std::make_shared<RealSleeper>());
  imaging::CallContext ctx;
  std::stop_source cancel;
  ctx.cancel = cancel.get_token();
  std::promise<void> backing_off;
  ctx.on_progress = [&](const std::string&) { backing_off.set_value(); };
  steady_clock::time_point cancelled_at;
  std::thread canceller([&] {
    backing_off.get_future().wait();
    cancelled_at = steady_clock::now();
    cancel.request_stop();
  });
  auto r = Generate(*client, "solid red", ctx);
  const auto returned_at = steady_clock::now();
  canceller.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kCancelled) << r.error().message;
  EXPECT_LT(returned_at - cancelled_at, kCancelLatency)  // the backoff wait is woken
      << std::chrono::duration<double, std::milli>(returned_at - cancelled_at).count() << " ms";
  EXPECT_EQ(server_.RequestCount(), 1u);
}

TEST_F(GeminiClientFakeTest, CancellationInterruptsAnAttemptInFlight) {
  Script(R"([{"delay_ms":30000}])");
  auto client = MakeClient(std::make_shared<RealSleeper>());
  imaging::CallContext ctx;
  std::stop_source cancel;
  ctx.cancel = cancel.get_token();
  steady_clock::time_point cancelled_at;
  std::thread canceller([&] {
    server_.WaitForRequests(1, std::chrono::seconds(20));
    cancelled_at = steady_clock::now();
    cancel.request_stop();
  });
  auto r = Generate(*client, "solid red", ctx);
  const auto returned_at = steady_clock::now();
  canceller.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kCancelled) << r.error().message;
  // The socket is aborted by the cancel itself, not found by a poll.
  EXPECT_LT(returned_at - cancelled_at, kCancelLatency)
      << std::chrono::duration<double, std::milli>(returned_at - cancelled_at).count() << " ms";
}

TEST_F(GeminiClientFakeTest, SafetyBlocksAreClearAndNotRetried) {
  Script(R"([{"block_reason":"SAFETY"},
             {"finish_reason":"IMAGE_SAFETY","finish_message":"Unable to show the generated image."}])");
  auto client = MakeClient();
  auto blocked = Generate(*client, "something");
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(blocked.error().message.rfind("prompt blocked by Gemini (SAFETY)", 0), 0u);
  auto refused = Generate(*client, "something");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(refused.error().message.find("IMAGE_SAFETY"), std::string::npos);
  EXPECT_NE(refused.error().message.find("Unable to show the generated image."), std::string::npos);
  EXPECT_EQ(server_.RequestCount(), 2u);
}

TEST_F(GeminiClientFakeTest, NoImageIsRetriedOnceOnly) {
  Script(
      R"([{"finish_reason":"NO_IMAGE"},{"finish_reason":"NO_IMAGE"},{"finish_reason":"IMAGE_OTHER"}])");
  auto client = MakeClient();
  auto r = Generate(*client, "solid red");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("NO_IMAGE"), std::string::npos);
  EXPECT_EQ(server_.RequestCount(), 2u);
  auto second = Generate(*client, "solid red");  // IMAGE_OTHER, then a normal answer
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(server_.RequestCount(), 4u);
}

TEST_F(GeminiClientFakeTest, TextOnlyAnswerIsAnErrorWithTheText) {
  Script(R"([{"text_only":"I can't do that"}])");
  auto client = MakeClient();
  auto r = Generate(*client, "solid red");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(r.error().message.find("I can't do that"), std::string::npos);
  EXPECT_EQ(server_.RequestCount(), 1u);
}

TEST_F(GeminiClientFakeTest, UnknownEditInstructionSurfacesTheEnginesText) {
  auto client = MakeClient();
  auto red = Generate(*client, "solid red");
  ASSERT_TRUE(red.ok());
  imaging::EditRequest edit;
  edit.prompt = "make it look like a renaissance fresco";
  edit.base = {red->bytes, red->mime_type};
  auto r = client->Edit(edit, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(r.error().message.find("The model said"), std::string::npos) << r.error().message;
}

TEST_F(GeminiClientFakeTest, ThoughtPartsAreSkipped) {
  Script(R"([{"thought_parts":3}])");
  auto client = MakeClient();
  auto r = Generate(*client, "solid red");
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto info = imaging::ReadImageInfo(r->bytes);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->width, 1024);  // not the 64x64 draft
  EXPECT_EQ(r->text, "Here is the image you asked for.");
}

TEST_F(GeminiClientFakeTest, JpegLabelledPngComesBackAsJpeg) {
  Script(R"([{"jpeg_labelled_png":true}])");
  auto client = MakeClient();
  auto r = Generate(*client, "solid red");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->mime_type, "image/jpeg");
  EXPECT_EQ(imaging::SniffFormat(r->bytes), imaging::ImageFormat::kJpeg);
}

TEST_F(GeminiClientFakeTest, BrokenBodiesAreClearErrors) {
  auto client = MakeClient();
  Script(R"([{"malformed_json":true},{"malformed_json":true}])");
  auto malformed = Generate(*client, "solid red");
  ASSERT_FALSE(malformed.ok());
  EXPECT_NE(malformed.error().message.find("not valid JSON"), std::string::npos);
  EXPECT_EQ(server_.RequestCount(), 2u);  // one retry

  server_.Reset();
  Script(R"([{"truncated_body":true},{"truncated_body":true},{"truncated_body":true},
             {"truncated_body":true},{"truncated_body":true}])");
  auto truncated = Generate(*client, "solid red");
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(truncated.error().message.find("while reading the answer"), std::string::npos)
      << truncated.error().message;
  EXPECT_NE(truncated.error().message.find("gave up after 5 attempts"), std::string::npos);

  server_.Reset();
  Script(R"([{"drop_connection":true}])");
  std::vector<std::string> progress;
  imaging::CallContext ctx;
  ctx.on_progress = [&](const std::string& m) { progress.push_back(m); };
  auto recovered = Generate(*client, "solid red", ctx);
  ASSERT_TRUE(recovered.ok()) << recovered.error().message;
  ASSERT_EQ(progress.size(), 1u);
  EXPECT_NE(progress[0].find("connection to Gemini failed"), std::string::npos) << progress[0];
}

TEST_F(GeminiClientFakeTest, LargeBodiesRoundTripBothWays) {
  // PNG magic plus 8 MB of pseudo-random bytes: the client only sniffs, never decodes.
  std::string big("\x89PNG\r\n\x1a\n", 8);
  uint64_t x = 88172645463325252ull;
  while (big.size() < 8u * 1024 * 1024) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    big.push_back(static_cast<char>(x));
  }
  const std::string path = ::testing::TempDir() + "/gemini_client_big.png";
  {
    std::ofstream out(path, std::ios::binary);
    out << big;
  }
  Script(R"([{"fixed_image_file":")" + path + R"("}])");
  auto client = MakeClient();
  imaging::EditRequest edit;
  edit.prompt = "anything";
  edit.base = {big, "image/png"};
  auto r = client->Edit(edit, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->bytes == big);
  EXPECT_EQ(r->mime_type, "image/png");
  const Json log = server_.Requests();
  EXPECT_EQ(log[0]["images"][0]["bytes"], big.size());
  std::remove(path.c_str());
}

TEST_F(GeminiClientFakeTest, AnswersOverTheCapAreRefusedOnceNamingTheCapAndTheEndpoint) {
  const int over = static_cast<int>(kMaxGeminiAnswerBytes + 1024);
  Script(R"([{"answer_bytes":)" + std::to_string(over) + R"(},{"answer_bytes":)" +
         std::to_string(over) + R"(,"chunked":true}])");
  auto client = MakeClient();
  for (const char* how : {"declared", "chunked"}) {
    auto r = Generate(*client, "solid red");
    ASSERT_FALSE(r.ok()) << how;
    EXPECT_EQ(r.error().code, ErrorCode::kTooLarge) << how;
    EXPECT_NE(r.error().message.find("the answer from Gemini (" + server_.base_url() +
                                     ") is larger than 96 MiB"),
              std::string::npos)
        << r.error().message;
  }
  EXPECT_NE(messages_[0].find("(it declared " + std::to_string(over) + " bytes)"),
            std::string::npos);
  EXPECT_EQ(server_.RequestCount(), 2u);  // one request each: not retried
  EXPECT_TRUE(sleeper_->sleeps().empty());
}

TEST(SendHttpTest, EachRequestReadsAtMostItsCap) {
  fake_gemini::FakeGeminiServer server;
  ASSERT_TRUE(server.Start("127.0.0.1", 0).ok());
  ASSERT_TRUE(server
                  .PushScript(Json::parse(R"([{"answer_bytes":5000},{"answer_bytes":5000,
      "chunked":true},{"answer_bytes":5000},{"answer_bytes":5000,"chunked":true}])"))
                  .ok());
  const std::string body = R"({"contents":[{"role":"user","parts":[{"text":"x"}]}]})";
  HttpRequest request;
  request.path = "/v1beta/models/gemini-2.5-flash-image:generateContent";
  request.headers = {{"x-goog-api-key", "k-123456"}};
  request.content_type = "application/json";
  request.body = body;
  request.peer = "the test peer";
  const auto endpoint = ParseBaseUrl(server.base_url());
  ASSERT_TRUE(endpoint.ok());
  for (size_t cap : {size_t{4999}, size_t{4999}, size_t{5000}, size_t{5000}}) {
    request.max_answer_bytes = cap;
    auto answer = SendHttp(*endpoint, request, {}, {}, steady_clock::time_point::max(), nullptr);
    if (cap == 5000) {
      ASSERT_TRUE(answer.ok()) << answer.error().message;
      EXPECT_EQ(answer->body.size(), 5000u);
      continue;
    }
    ASSERT_FALSE(answer.ok());
    EXPECT_EQ(answer.error().code, ErrorCode::kTooLarge);
    EXPECT_NE(answer.error().message.find("the answer from the test peer (" + server.base_url() +
                                          ") is larger than 4999 bytes"),
              std::string::npos)
        << answer.error().message;
  }
  EXPECT_EQ(HttpRequest().max_answer_bytes, kMaxTokenAnswerBytes);
  EXPECT_EQ(FormatByteCap(kMaxGeminiAnswerBytes), "96 MiB");
  EXPECT_EQ(FormatByteCap(kMaxTokenAnswerBytes), "64 KiB");
}

TEST_F(GeminiClientFakeTest, ConnectionRefusedIsRetriedThenReported) {
  const std::string url = server_.base_url();
  server_.Stop();
  options_.base_url = url;
  options_.retry.max_attempts = 2;
  auto client = MakeClient();
  auto r = Generate(*client, "solid red");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(r.error().message.find("could not connect to Gemini"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(sleeper_->sleeps().size(), 1u);
}

TEST_F(GeminiClientFakeTest, TheKeyNeverAppearsInErrorsProgressOrTheUrl) {
  Script(std::string(R"([{"status":400,"message":"key )") + kKey + R"( is odd"},
      {"status":403},{"status":404},{"status":402},{"status":429,"quota_id":"PerDay"},
      {"status":400,"api_status":"FAILED_PRECONDITION"},
      {"block_reason":"OTHER"},{"finish_reason":"SPII"},{"text_only":"no"},
      {"finish_reason":"MAX_TOKENS"},
      {"status":503,"message":"overloaded for )" +
         kKey + R"("},{"status":502,"raw_body":")" + kKey +
         R"("},{"status":500},{"status":504},{"status":408},
      {"malformed_json":true},{"malformed_json":true},
      {"finish_reason":"NO_IMAGE"},{"finish_reason":"OTHER"}])");
  auto client = MakeClient();
  std::vector<std::string> progress;
  imaging::CallContext ctx;
  ctx.on_progress = [&](const std::string& m) { progress.push_back(m); };
  while (server_.PendingActions() > 0) {
    auto r = Generate(*client, "solid red", ctx);
    ASSERT_FALSE(r.ok());
  }
  // Key rejected, connection refused, option validation.
  ASSERT_TRUE(server_.Configure({{"invalid_key", kKey}}).ok());
  ASSERT_FALSE(Generate(*client, "solid red", ctx).ok());
  options_.model = "bad/model";
  auto bad = GeminiClient::Create(options_, &PostJson);
  ASSERT_FALSE(bad.ok());
  messages_.push_back(bad.error().message);
  options_.model = kDefaultModel;
  options_.base_url = "ftp://" + std::string(kKey);
  bad = GeminiClient::Create(options_, &PostJson);
  ASSERT_FALSE(bad.ok());
  messages_.push_back(bad.error().message);
  const Json log = server_.Requests();
  server_.Stop();
  options_.base_url = server_.base_url();
  options_.retry.max_attempts = 1;
  auto refused = MakeClient();
  ASSERT_FALSE(Generate(*refused, "solid red", ctx).ok());

  EXPECT_GE(messages_.size(), 17u);
  for (const std::string& m : messages_) {
    EXPECT_EQ(m.find(kKey), std::string::npos) << m;
    EXPECT_FALSE(m.empty());
  }
  for (const std::string& m : progress) EXPECT_EQ(m.find(kKey), std::string::npos) << m;
  for (const Json& entry : log) {
    EXPECT_EQ(entry["target"].get<std::string>().find(kKey), std::string::npos);
    EXPECT_EQ(entry["target"].get<std::string>().find("key="), std::string::npos);
    EXPECT_EQ(entry["api_key_source"], "header");
  }
}

TEST(GeminiClientOptionsTest, ValidatesModelBaseUrlAndKey) {
  GeminiClientOptions o;
  o.api_key = "k-123456";
  EXPECT_TRUE(ValidateOptions(o).ok());
  for (const char* model : {"", "../x", "a?b", "a&b", "models/x", "a b", "a#b", "a%2fb"}) {
    o.model = model;
    EXPECT_EQ(ValidateOptions(o).error().code, ErrorCode::kInvalidArgument) << model;
  }
  o.model = kDefaultModel;
  for (const char* url : {"ftp://x", "generativelanguage.googleapis.com", "https://",
                          "http://h?q=1", "https://user@host"}) {
    o.base_url = url;
    EXPECT_FALSE(ValidateOptions(o).ok()) << url;
  }
  o.base_url = "http://127.0.0.1:1/prefix/";
  EXPECT_TRUE(ValidateOptions(o).ok());
  o.api_key = "";
  EXPECT_EQ(ValidateOptions(o).error().code, ErrorCode::kPermissionDenied);
  o.api_key = "abc\r\nX-Evil: 1";
  EXPECT_FALSE(ValidateOptions(o).ok());
  o.api_key = "k-123456";
  o.api_version = "v1/../x";
  EXPECT_FALSE(ValidateOptions(o).ok());
  o.api_version = "";
  EXPECT_TRUE(ValidateOptions(o).ok());
}

TEST(GeminiClientOptionsTest, ParsesBaseUrls) {
  auto e = ParseBaseUrl("https://generativelanguage.googleapis.com/");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->https);
  EXPECT_EQ(e->scheme_host_port, "https://generativelanguage.googleapis.com");
  EXPECT_EQ(e->path_prefix, "");
  e = ParseBaseUrl("http://127.0.0.1:8080/proxy//");
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->https);
  EXPECT_EQ(e->scheme_host_port, "http://127.0.0.1:8080");
  EXPECT_EQ(e->path_prefix, "/proxy");
}

}  // namespace
}  // namespace imgmcp::gemini
