// The fake's own Gemini behaviour, checked with raw HTTP requests (gemini_client's PostJson).
#include <gtest/gtest.h>

#include <functional>

#include "common/base64.h"
#include "common/json.h"
#include "gemini_client/http_call.h"
#include "imaging/codec.h"
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
    auto r = gemini::PostJson(endpoint_, path, key, body, {}, std::stop_token(),
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

std::string PathFor(const std::string& model) {
  return "/v1beta/models/" + model + ":generateContent";
}

std::string WithConfig(const std::string& generation_config, const std::string& extra = "") {
  return R"({"contents":[{"role":"user","parts":[{"text":"solid blue"}]}],"generationConfig":)" +
         generation_config + extra + "}";
}

// A chat's second turn replays the first answer; the fake checks every signature it issued.
TEST_F(FakeServerTest, ChatSecondTurnNeedsIntactSignaturesAndEditsThePreviousImage) {
  HttpAnswer first =
      Post(kPath, R"({"contents":[{"role":"user","parts":[{"text":"solid red"}]}]})");
  ASSERT_EQ(first.status, 200) << first.body;
  const Json answer = Json::parse(first.body)["candidates"][0]["content"];
  auto chat = [&](const Json& model_content) {
    Json body = {
        {"contents", Json::array({{{"role", "user"}, {"parts", {{{"text", "solid red"}}}}},
                                  model_content,
                                  {{"role", "user"}, {"parts", {{{"text", "invert"}}}}}})}};
    return Post(kPath, body.dump());
  };
  HttpAnswer a = chat(answer);
  ASSERT_EQ(a.status, 200) << a.body;
  const Json parts = Json::parse(a.body)["candidates"][0]["content"]["parts"];
  const std::string cyan = *Base64Decode(parts.back()["inlineData"]["data"].get<std::string>());
  const std::string red =
      *Base64Decode(answer["parts"][1]["inlineData"]["data"].get<std::string>());
  EXPECT_NE(cyan, red);  // the previous answer was edited
  EXPECT_EQ(server_.Requests()[1]["turns"][1]["signatures"], 2);

  struct Alteration {
    const char* what;
    std::function<void(Json&)> apply;
    const char* message;
    const char* problem;
  };
  const Alteration alterations[] = {
      {"no image signature", [](Json& c) { c["parts"][1].erase("thoughtSignature"); },
       "Image part is missing a thought_signature in content position 2, part position 2.",
       "missing"},
      {"other image bytes",
       [&](Json& c) {
         c["parts"][1]["inlineData"]["data"] =
             Base64Encode(gemini::testing::SolidPng(8, 8, 1, 2, 3));
       },
       "Image part is missing a thought_signature in content position 2, part position 2.",
       "altered"},
      {"image signature swapped with the text's",
       [](Json& c) { c["parts"][1]["thoughtSignature"] = c["parts"][0]["thoughtSignature"]; },
       "Image part is missing a thought_signature", "altered"},
      {"a made-up signature", [](Json& c) { c["parts"][1]["thoughtSignature"] = "c2ln"; },
       "Image part is missing a thought_signature", "altered"},
      {"edited text", [](Json& c) { c["parts"][0]["text"] = "Here is another image."; },
       "Corrupted thought signature in content position 2, part position 1.", "altered"},
  };
  for (const Alteration& alt : alterations) {
    Json content = answer;
    alt.apply(content);
    server_.Reset();
    a = chat(content);
    EXPECT_EQ(a.status, 400) << alt.what;
    EXPECT_EQ(ErrorOf(a)["status"], "INVALID_ARGUMENT") << alt.what;
    EXPECT_NE(ErrorOf(a)["message"].get<std::string>().find(alt.message), std::string::npos)
        << alt.what << ": " << a.body;
    EXPECT_EQ(server_.Requests()[0]["signature_problem"], alt.problem) << alt.what;
  }
  // Signatures are valid only for the model that produced them.
  server_.Reset();
  Json body = {{"contents", Json::array({{{"role", "user"}, {"parts", {{{"text", "solid red"}}}}},
                                         answer,
                                         {{"role", "user"}, {"parts", {{{"text", "invert"}}}}}})}};
  a = Post(PathFor("gemini-3.1-flash-image"), body.dump());
  EXPECT_EQ(a.status, 400) << a.body;
}

TEST_F(FakeServerTest, SizesAndRatiosFollowEachModel) {
  struct Case {
    const char* model;
    const char* image_config;
    int status;
    int width, height;  // of the answer, when 200
  };
  const Case cases[] = {
      {"gemini-3.1-flash-lite-image", R"({"imageSize":"1K","aspectRatio":"4:5"})", 200, 896, 1152},
      {"gemini-3.1-flash-lite-image", R"({"imageSize":"2K"})", 400, 0, 0},
      {"gemini-3.1-flash-lite-image", R"({"aspectRatio":"1:8"})", 400, 0, 0},
      {"gemini-3.1-flash-image", R"({"imageSize":"512","aspectRatio":"1:8"})", 200, 192, 1536},
      {"gemini-3.1-flash-image", R"({"image_size":"2K","aspect_ratio":"16:9"})", 200, 2688, 1536},
      {"gemini-3.1-flash-image", R"({"imageSize":"2k"})", 400, 0, 0},  // upper-case K only
      {"gemini-3-pro-image", R"({"imageSize":"512"})", 400, 0, 0},
      {"gemini-3-pro-image", R"({"imageSize":"1K","aspectRatio":"4:1"})", 400, 0, 0},
      {"gemini-2.5-flash-image", R"({"imageSize":"1K","aspectRatio":"21:9"})", 200, 1536, 672},
      {"gemini-2.5-flash-image", R"({"imageSize":"4K"})", 400, 0, 0},
      {"gemini-nano-banana-2.1", R"({"imageSize":"2K","aspectRatio":"1:4"})", 200, 1024, 4096},
      {"gemini-nano-banana-2.1", R"({"imageSize":"1K","aspectRatio":"8:1"})", 200, 3072, 384},
      {"gemini-nano-banana-2.1", R"({"imageSize":"512"})", 400, 0, 0},
  };
  for (const Case& c : cases) {
    HttpAnswer a = Post(PathFor(c.model),
                        WithConfig(std::string(R"({"imageConfig":)") + c.image_config + "}"));
    ASSERT_EQ(a.status, c.status) << c.model << " " << c.image_config << ": " << a.body;
    if (c.status != 200) {
      EXPECT_EQ(ErrorOf(a)["status"], "INVALID_ARGUMENT");
      EXPECT_NE(ErrorOf(a)["message"].get<std::string>().find(std::string("for model ") + c.model),
                std::string::npos)
          << a.body;
      continue;
    }
    const Json parts = Json::parse(a.body)["candidates"][0]["content"]["parts"];
    const std::string png = *Base64Decode(parts.back()["inlineData"]["data"].get<std::string>());
    auto info = imaging::ReadImageInfo(png);
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(info->width, c.width) << c.model << " " << c.image_config;
    EXPECT_EQ(info->height, c.height) << c.model << " " << c.image_config;
  }
}

TEST_F(FakeServerTest, SearchGroundingAndThinkingFollowEachModel) {
  const std::string search = R"(,"tools":[{"google_search":{}}])";
  HttpAnswer a = Post(kPath, WithConfig("{}", search));
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(ErrorOf(a)["message"],
            "Search Grounding is not supported for models/gemini-3.1-flash-lite-image.");
  for (const char* tools :
       {R"(,"tools":[{"google_search":{}}])", R"(,"tools":[{"googleSearch":{}}])"}) {
    a = Post(PathFor("gemini-3.1-flash-image"), WithConfig("{}", tools));
    ASSERT_EQ(a.status, 200) << a.body;
    const Json grounding = Json::parse(a.body)["candidates"][0]["groundingMetadata"];
    EXPECT_EQ(grounding["webSearchQueries"], Json::array({"solid blue"}));
    ASSERT_EQ(grounding["groundingChunks"].size(), 2u);
    EXPECT_TRUE(grounding["groundingChunks"][0]["web"].contains("uri"));
    EXPECT_TRUE(grounding["groundingChunks"][0]["web"].contains("title"));
  }
  a = Post(PathFor("gemini-3.1-flash-image"),
           WithConfig("{}", R"(,"tools":[{"codeExecution":{}}])"));
  EXPECT_EQ(a.status, 400);
  a = Post(PathFor("gemini-3.1-flash-image"), WithConfig("{}", R"(,"tools":[{"googleSerch":{}}])"));
  EXPECT_EQ(a.status, 400);
  EXPECT_NE(a.body.find("Unknown name \\\"googleSerch\\\""), std::string::npos) << a.body;
  // Without search there is no groundingMetadata.
  a = Post(PathFor("gemini-3.1-flash-image"), WithConfig("{}"));
  EXPECT_FALSE(Json::parse(a.body)["candidates"][0].contains("groundingMetadata"));

  a = Post(kPath, WithConfig(R"({"thinkingConfig":{"thinkingLevel":"HIGH"}})"));
  ASSERT_EQ(a.status, 200) << a.body;
  const Json parts = Json::parse(a.body)["candidates"][0]["content"]["parts"];
  EXPECT_EQ(parts[0]["thought"], true);  // HIGH thinks out loud first
  EXPECT_FALSE(parts[0].contains("thoughtSignature"));
  EXPECT_TRUE(parts.back().contains("thoughtSignature"));
  EXPECT_GT(Json::parse(a.body)["usageMetadata"]["thoughtsTokenCount"].get<int>(), 0);
  a = Post(kPath, WithConfig(R"({"thinkingConfig":{"thinkingLevel":"LOW"}})"));
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(ErrorOf(a)["message"],
            "Thinking level LOW is not supported for models/gemini-3.1-flash-lite-image; this "
            "model takes MINIMAL or HIGH.");
  a = Post(kPath, WithConfig(R"({"thinkingConfig":{"thinkingLevel":"EXTREME"}})"));
  EXPECT_EQ(a.status, 400);
  // Nano Banana 2.1 has a third level; more thinking reports more thought tokens.
  int previous = 0;
  for (const char* level : {"MINIMAL", "MEDIUM", "HIGH"}) {
    a = Post(PathFor("gemini-nano-banana-2.1"),
             WithConfig(std::string(R"({"thinkingConfig":{"thinkingLevel":")") + level + "\"}}"));
    ASSERT_EQ(a.status, 200) << level << ": " << a.body;
    const int thoughts = Json::parse(a.body)["usageMetadata"]["thoughtsTokenCount"].get<int>();
    EXPECT_GT(thoughts, previous) << level;
    previous = thoughts;
  }
  a = Post(PathFor("gemini-nano-banana-2.1"),
           WithConfig(R"({"thinkingConfig":{"thinkingLevel":"LOW"}})"));
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(ErrorOf(a)["message"],
            "Thinking level LOW is not supported for models/gemini-nano-banana-2.1; this model "
            "takes MINIMAL, MEDIUM or HIGH.");
  a = Post(PathFor("gemini-2.5-flash-image"),
           WithConfig(R"({"thinkingConfig":{"thinkingLevel":"MINIMAL"}})"));
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(ErrorOf(a)["message"], "Thinking level is not supported for this model.");
  a = Post(PathFor("gemini-3-pro-image"), WithConfig("{}"));
  ASSERT_EQ(a.status, 200);
  EXPECT_EQ(Json::parse(a.body)["candidates"][0]["content"]["parts"][0]["thought"], true);
}

// usageMetadata as Google reports it: the image's tokens for its model and size, the prompt's
// tokens by modality, and no thoughts without thinking.
TEST_F(FakeServerTest, UsageCountsTheImageByModelAndSizeAndThePromptByModality) {
  struct Case {
    const char* model;
    const char* size;
    int image_tokens;
  };
  for (const Case& c :
       {Case{"gemini-3.1-flash-lite-image", "1K", 1120}, Case{"gemini-nano-banana-2.1", "2K", 1680},
        Case{"gemini-3-pro-image", "2K", 1120}, Case{"gemini-2.5-flash-image", "1K", 1290}}) {
    HttpAnswer a =
        Post(PathFor(c.model), WithConfig(std::string(R"({"imageConfig":{"imageSize":")") + c.size +
                                          "\",\"aspectRatio\":\"1:1\"}}"));
    ASSERT_EQ(a.status, 200) << c.model << ": " << a.body;
    const Json usage = Json::parse(a.body)["usageMetadata"];
    EXPECT_EQ(usage["candidatesTokenCount"], c.image_tokens + 12) << c.model;
    EXPECT_EQ(usage["candidatesTokensDetails"][0],
              Json({{"modality", "IMAGE"}, {"tokenCount", c.image_tokens}}))
        << c.model;
    EXPECT_EQ(usage["promptTokensDetails"], Json::parse(R"([{"modality":"TEXT","tokenCount":3}])"))
        << c.model;
    EXPECT_EQ(usage["promptTokenCount"], 3);
    const int thoughts = usage.value("thoughtsTokenCount", 0);
    EXPECT_EQ(usage["totalTokenCount"], 3 + c.image_tokens + 12 + thoughts) << c.model;
    EXPECT_EQ(thoughts > 0, std::string(c.model) == "gemini-3-pro-image") << c.model;
  }
}

}  // namespace
}  // namespace imgmcp::fake_gemini
