// The fake's own Gemini behaviour, checked with raw HTTP requests (gemini_client's PostJson).
#include <gtest/gtest.h>

#include "common/base64.h"
#include "common/json.h"
#include "gemini_client/http_call.h"
#include "tests/fake_gemini/fake_gemini_server.h"
#include "tests/unit/gemini_client/test_images.h"

namespace imgmcp::fake_gemini {
namespace {

using gemini::HttpAnswer;

constexpr char kPath[] = "/v1beta/models/gemini-3.1-flash-lite-image:generateContent";

class FakeServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start().ok());
    auto e = gemini::ParseBaseUrl(server_.base_url());
    ASSERT_TRUE(e.ok());
    endpoint_ = *e;
  }
  HttpAnswer Post(const std::string& path, const std::string& body,
                  const std::string& key = "test-key") {
    auto r = gemini::PostJson(endpoint_, path, key, body, {}, CancellationToken(),
                              std::chrono::steady_clock::now() + std::chrono::seconds(30), nullptr);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : HttpAnswer{};
  }
  static Json ErrorOf(const HttpAnswer& a) { return Json::parse(a.body).at("error"); }

  FakeGeminiServer server_;
  gemini::Endpoint endpoint_;
};

const char kSimple[] =
    R"({"contents":[{"role":"user","parts":[{"text":"solid blue"}]}],"generationConfig":{"responseModalities":["TEXT","IMAGE"]}})";

TEST_F(FakeServerTest, AnswersLikeGemini) {
  HttpAnswer a = Post(kPath, kSimple);
  ASSERT_EQ(a.status, 200) << a.body;
  const Json j = Json::parse(a.body);
  EXPECT_TRUE(j.contains("responseId"));
  EXPECT_EQ(j["modelVersion"], "gemini-3.1-flash-lite-image");
  EXPECT_TRUE(j["usageMetadata"].contains("totalTokenCount"));
  const Json& parts = j["candidates"][0]["content"]["parts"];
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_TRUE(parts[0].contains("text"));
  EXPECT_TRUE(parts[0].contains("thoughtSignature"));
  EXPECT_EQ(parts[1]["inlineData"]["mimeType"], "image/png");
  EXPECT_TRUE(parts[1].contains("thoughtSignature"));
  EXPECT_EQ(j["candidates"][0]["finishReason"], "STOP");
}

TEST_F(FakeServerTest, AcceptsSnakeCaseAndTheQueryKeyAndV1) {
  const std::string png = gemini::testing::SolidPng(8, 8, 255, 0, 0);
  const std::string body =
      R"({"contents":[{"parts":[{"text":"invert"},{"inline_data":{"mime_type":"image/png","data":")" +
      Base64Encode(png) +
      R"("}}]}],"generation_config":{"response_modalities":["IMAGE"],"image_config":{"aspect_ratio":"1:1"}}})";
  HttpAnswer a = Post("/v1/models/gemini-3.1-flash-lite-image:generateContent?key=qk", body, "");
  ASSERT_EQ(a.status, 200) << a.body;
  const Json parts = Json::parse(a.body)["candidates"][0]["content"]["parts"];
  ASSERT_EQ(parts.size(), 1u);  // IMAGE only: no text part
  const Json log = server_.Requests();
  EXPECT_EQ(log[0]["api_key_source"], "query");
  EXPECT_EQ(log[0]["api_key"], "qk");
  EXPECT_EQ(log[0]["api_version"], "v1");
  EXPECT_EQ(log[0]["images"][0]["bytes"], png.size());
  EXPECT_EQ(log[0]["body"]["contents"][0]["parts"][1]["inline_data"]["data"],
            "<" + std::to_string(Base64Encode(png).size()) + " base64 chars>");
}

TEST_F(FakeServerTest, RejectsWhatGeminiRejects) {
  HttpAnswer a = Post(kPath, kSimple, "");
  EXPECT_EQ(a.status, 403);
  EXPECT_EQ(ErrorOf(a)["status"], "PERMISSION_DENIED");
  a = Post(kPath, kSimple, "bad-key");
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(ErrorOf(a)["details"][0]["reason"], "API_KEY_INVALID");
  a = Post("/v1beta/models/gemini-9:generateContent", kSimple);
  EXPECT_EQ(a.status, 404);
  a = Post(kPath, R"({"contents":[{"parts":[{"text":"x"}]}],"aspect_ratio":"1:1"})");
  EXPECT_EQ(a.status, 400);
  EXPECT_NE(ErrorOf(a)["message"].get<std::string>().find("Unknown name \"aspect_ratio\""),
            std::string::npos);
  a = Post(
      kPath,
      R"({"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"imageConfig":{"aspectRatio":"1:1","foo":1}}})");
  EXPECT_EQ(a.status, 400);
  a = Post(kPath,
           R"({"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"candidateCount":2}})");
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(ErrorOf(a)["message"], "Multiple candidates is not enabled for this model");
  a = Post(
      kPath,
      R"({"contents":[{"parts":[{"text":"x"},{"inlineData":{"mimeType":"image/jpg","data":"AAAA"}}]}]})");
  EXPECT_EQ(a.status, 400);
  a = Post(kPath, "not json");
  EXPECT_EQ(a.status, 400);
}

TEST_F(FakeServerTest, StreamsAsServerSentEvents) {
  HttpAnswer a =
      Post("/v1beta/models/gemini-3.1-flash-lite-image:streamGenerateContent?alt=sse", kSimple);
  ASSERT_EQ(a.status, 200);
  ASSERT_EQ(a.body.rfind("data: {", 0), 0u);
  EXPECT_EQ(a.body.substr(a.body.size() - 4), "\r\n\r\n");
}

TEST_F(FakeServerTest, ScriptsAreConsumedInOrderAndValidated) {
  ASSERT_TRUE(
      server_.PushScript(Json::parse(R"([{"status":503},{"status":429,"retry_delay":"2s"}])"))
          .ok());
  EXPECT_EQ(server_.PendingActions(), 2u);
  EXPECT_EQ(Post(kPath, kSimple).status, 503);
  HttpAnswer a = Post(kPath, kSimple);
  EXPECT_EQ(a.status, 429);
  EXPECT_EQ(ErrorOf(a)["details"][0]["retryDelay"], "2s");
  EXPECT_EQ(Post(kPath, kSimple).status, 200);
  EXPECT_FALSE(server_.PushScript(Json::parse(R"([{"stauts":503}])")).ok());
  EXPECT_FALSE(server_.PushScript(Json::parse(R"([{"status":"503"}])")).ok());
  const Json log = server_.Requests();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0]["action"]["status"], 503);
  EXPECT_EQ(log[2]["action"], nullptr);
  server_.Reset();
  EXPECT_EQ(server_.RequestCount(), 0u);
}

TEST_F(FakeServerTest, ControlApiOverHttp) {
  HttpAnswer a = Post("/_fake/script", R"([{"status":500}])", "");
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(Post(kPath, kSimple).status, 500);
  a = Post("/_fake/script", R"([{"nope":1}])", "");
  EXPECT_EQ(a.status, 400);
  a = Post("/_fake/reset", "{}", "");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(server_.RequestCount(), 0u);
}

TEST_F(FakeServerTest, ChatSecondTurnNeedsSignaturesAndEditsThePreviousImage) {
  const std::string png = gemini::testing::SolidPng(8, 8, 255, 0, 0);
  const std::string model_part =
      R"({"inlineData":{"mimeType":"image/png","data":")" + Base64Encode(png) + R"("}})";
  const std::string without =
      R"({"contents":[{"role":"user","parts":[{"text":"solid red"}]},{"role":"model","parts":[)" +
      model_part + R"(]},{"role":"user","parts":[{"text":"invert"}]}]})";
  HttpAnswer a = Post(kPath, without);
  EXPECT_EQ(a.status, 400);
  EXPECT_NE(a.body.find("missing a thought_signature"), std::string::npos);
  std::string with = without;
  with.replace(with.find(model_part), model_part.size(),
               model_part.substr(0, model_part.size() - 1) + R"(,"thoughtSignature":"c2ln"})");
  a = Post(kPath, with);
  ASSERT_EQ(a.status, 200) << a.body;
}

}  // namespace
}  // namespace imgmcp::fake_gemini
