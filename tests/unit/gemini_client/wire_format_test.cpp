#include "gemini_client/wire_format.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/base64.h"
#include "common/json.h"
#include "gemini_client/models.h"
#include "imaging/codec.h"
#include "tests/unit/gemini_client/test_images.h"

namespace imgmcp::gemini {
namespace {

using testing::GifBytes;
using testing::SolidJpeg;
using testing::SolidPng;

const imaging::ModelCapabilities& ModelRow(const std::string& id) {
  const imaging::ModelCapabilities* row = imaging::FindModel(BuiltInGeminiModels(), id);
  if (row == nullptr) std::abort();
  return *row;
}
const imaging::ModelCapabilities& Lite() { return ModelRow("gemini-3.1-flash-lite-image"); }
// The retired 3.1 Flash Image row: every size (512 too) and the extreme ratios; the request
// builder serves a retired model's row alike (--allow-retired).
const imaging::ModelCapabilities& Flash() { return ModelRow("gemini-3.1-flash-image"); }
const imaging::ModelCapabilities& NanoBanana() { return ModelRow("gemini-nano-banana-2.1"); }

bool HasNull(const Json& j) {
  if (j.is_null()) return true;
  if (j.is_structured()) {
    for (const Json& v : j) {
      if (HasNull(v)) return true;
    }
  }
  return false;
}

std::string ImagePart(const std::string& bytes, const std::string& label, bool thought = false) {
  Json part = {{"inlineData", {{"mimeType", label}, {"data", Base64Encode(bytes)}}}};
  if (thought) part["thought"] = true;
  return part.dump();
}

std::string Candidate(const std::string& parts, const std::string& finish = "STOP") {
  return R"({"candidates":[{"content":{"role":"model","parts":[)" + parts +
         R"(]},"finishReason":")" + finish + R"(","index":0}],"modelVersion":"m"})";
}

// ---- requests --------------------------------------------------------------------------------

TEST(WireFormatRequestTest, GenerateHasPromptRatioAndModalitiesAndNoNulls) {
  imaging::GenerateRequest req;
  req.prompt = "a \"quoted\" cat\nwith ünïcode \\ and a tab\t";
  req.options.aspect_ratio = "16:9";
  auto body = BuildGenerateRequest(req, Lite());
  ASSERT_TRUE(body.ok()) << body.error().message;
  const Json j = Json::parse(*body);
  EXPECT_FALSE(HasNull(j));
  ASSERT_EQ(j.at("contents").size(), 1u);
  EXPECT_EQ(j["contents"][0]["role"], "user");
  ASSERT_EQ(j["contents"][0]["parts"].size(), 1u);
  EXPECT_EQ(j["contents"][0]["parts"][0]["text"], req.prompt);
  EXPECT_EQ(j["generationConfig"]["responseModalities"], Json::array({"TEXT", "IMAGE"}));
  EXPECT_EQ(j["generationConfig"]["imageConfig"]["aspectRatio"], "16:9");
  EXPECT_EQ(j.size(), 2u);  // contents and generationConfig only
}

TEST(WireFormatRequestTest, DeclaresSniffedMimeTypesNotLabels) {
  const std::string jpeg = SolidJpeg(8, 8, 0, 0, 255);
  imaging::GenerateRequest req;
  req.prompt = "combine";
  req.references.push_back({jpeg, "image/png"});  // wrong label on purpose
  req.references.push_back({SolidPng(4, 4, 1, 2, 3), "image/jpg"});
  auto body = BuildGenerateRequest(req, Lite());
  ASSERT_TRUE(body.ok()) << body.error().message;
  const Json j = Json::parse(*body);
  const Json& parts = j["contents"][0]["parts"];
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1]["inlineData"]["mimeType"], "image/jpeg");
  EXPECT_EQ(*Base64Decode(parts[1]["inlineData"]["data"].get<std::string>()), jpeg);
  EXPECT_EQ(parts[2]["inlineData"]["mimeType"], "image/png");
}

TEST(WireFormatRequestTest, EditSendsInstructionThenBaseThenReferencesWithoutImageConfig) {
  const std::string base = SolidPng(4, 4, 255, 0, 0);
  const std::string ref = SolidJpeg(4, 4, 0, 255, 0);
  imaging::EditRequest req;
  req.prompt = "invert";
  req.base = {base, "image/png"};
  req.references.push_back({ref, "image/jpeg"});
  auto body = BuildEditRequest(req, Lite());
  ASSERT_TRUE(body.ok()) << body.error().message;
  const Json j = Json::parse(*body);
  EXPECT_FALSE(HasNull(j));
  const Json& parts = j["contents"][0]["parts"];
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0]["text"], "invert");
  EXPECT_EQ(*Base64Decode(parts[1]["inlineData"]["data"].get<std::string>()), base);
  EXPECT_EQ(*Base64Decode(parts[2]["inlineData"]["data"].get<std::string>()), ref);
  EXPECT_FALSE(j["generationConfig"].contains("imageConfig"));
  EXPECT_EQ(j["generationConfig"]["responseModalities"], Json::array({"TEXT", "IMAGE"}));
}

TEST(WireFormatRequestTest, RejectsBadInputsBeforeSending) {
  imaging::GenerateRequest req;
  req.prompt = "x";
  req.options.aspect_ratio = "7:5";
  EXPECT_EQ(BuildGenerateRequest(req, Lite()).error().code, ErrorCode::kInvalidArgument);
  req.options.aspect_ratio = "1:1";
  req.prompt = "";
  EXPECT_EQ(BuildGenerateRequest(req, Lite()).error().code, ErrorCode::kInvalidArgument);
  req.prompt = "x";
  req.references.push_back({GifBytes(), "image/gif"});
  auto gif = BuildGenerateRequest(req, Lite());
  EXPECT_EQ(gif.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(gif.error().message.find("reference image 1"), std::string::npos);
  imaging::EditRequest edit;
  edit.prompt = "blur";
  edit.base = {"not an image at all", "image/png"};
  auto bad = BuildEditRequest(edit, Lite());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.error().message.find("the image to edit"), std::string::npos);
  edit.base = {"", "image/png"};
  EXPECT_EQ(BuildEditRequest(edit, Lite()).error().code, ErrorCode::kInvalidArgument);
}

TEST(WireFormatRequestTest, GenerationParametersReachTheBodyAsTheApiSpellsThem) {
  imaging::GenerateRequest req;
  req.prompt = "a poster";
  req.options.image_size = "2K";
  req.options.aspect_ratio = "1:8";
  req.options.thinking = "high";
  req.options.search = true;
  auto body = BuildGenerateRequest(req, Flash());
  ASSERT_TRUE(body.ok()) << body.error().message;
  Json j = Json::parse(*body);
  EXPECT_EQ(j["generationConfig"]["imageConfig"],
            Json({{"aspectRatio", "1:8"}, {"imageSize", "2K"}}));
  EXPECT_EQ(j["generationConfig"]["thinkingConfig"], Json({{"thinkingLevel", "HIGH"}}));
  EXPECT_EQ(j["tools"], Json::parse(R"([{"google_search":{}}])"));
  EXPECT_FALSE(HasNull(j));

  req.options.thinking = "minimal";
  req.options.search = false;
  req.options.image_size = "512";
  j = Json::parse(*BuildGenerateRequest(req, Flash()));
  EXPECT_EQ(j["generationConfig"]["thinkingConfig"]["thinkingLevel"], "MINIMAL");
  EXPECT_EQ(j["generationConfig"]["imageConfig"]["imageSize"], "512");
  EXPECT_FALSE(j.contains("tools"));

  // Each model's own levels, upper-cased as the API spells them.
  req.options.thinking = "medium";
  req.options.image_size = "4K";
  req.options.aspect_ratio = "8:1";
  j = Json::parse(*BuildGenerateRequest(req, NanoBanana()));
  EXPECT_EQ(j["generationConfig"]["thinkingConfig"]["thinkingLevel"], "MEDIUM");
  EXPECT_EQ(j["generationConfig"]["imageConfig"],
            Json({{"aspectRatio", "8:1"}, {"imageSize", "4K"}}));
  auto medium = BuildGenerateRequest(req, Flash());
  ASSERT_FALSE(medium.ok());
  EXPECT_NE(medium.error().message.find("does not take thinking medium: it takes minimal or high"),
            std::string::npos)
      << medium.error().message;

  // Nothing asked, nothing sent beyond the ratio (1:1 by default).
  imaging::GenerateRequest plain;
  plain.prompt = "a poster";
  j = Json::parse(*BuildGenerateRequest(plain, Flash()));
  EXPECT_EQ(j["generationConfig"]["imageConfig"], Json({{"aspectRatio", "1:1"}}));
  EXPECT_FALSE(j["generationConfig"].contains("thinkingConfig"));
  EXPECT_EQ(j.size(), 2u);
}

TEST(WireFormatRequestTest, TheBuilderRefusesWhatTheModelsRowForbids) {
  struct Case {
    const char* model;
    imaging::GenerationOptions options;
    int references;
    const char* says;
  };
  auto opt = [](const char* size, const char* ratio, const char* thinking, bool search) {
    imaging::GenerationOptions o;
    o.image_size = size;
    o.aspect_ratio = ratio;
    o.thinking = thinking;
    o.search = search;
    return o;
  };
  const Case cases[] = {
      {"gemini-3.1-flash-lite-image", opt("2K", "", "", false), 0, "image_size 2K"},
      {"gemini-3.1-flash-lite-image", opt("", "8:1", "", false), 0, "aspect_ratio 8:1"},
      {"gemini-3.1-flash-lite-image", opt("", "", "", true), 0, "search"},
      {"gemini-3-pro-image", opt("512", "", "", false), 0, "image_size 512"},
      {"gemini-3-pro-image", opt("", "", "high", false), 0, "thinking level"},
      {"gemini-nano-banana-2.1", opt("512", "", "", false), 0, "image_size 512"},
      {"gemini-3.1-flash-lite-image", opt("", "", "medium", false), 0, "thinking medium"},
      {"gemini-2.5-flash-image", opt("", "", "", false), 4, "at most 3 input images"},
  };
  for (const Case& c : cases) {
    imaging::GenerateRequest req;
    req.prompt = "x";
    req.options = c.options;
    for (int i = 0; i < c.references; ++i) req.references.push_back({SolidPng(2, 2, 0, 0, 0), ""});
    auto body = BuildGenerateRequest(req, ModelRow(c.model));
    ASSERT_FALSE(body.ok()) << c.model << " " << c.says;
    EXPECT_EQ(body.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(body.error().message.find(std::string("model ") + c.model), std::string::npos)
        << body.error().message;
    EXPECT_NE(body.error().message.find(c.says), std::string::npos) << body.error().message;
  }
}

TEST(WireFormatRequestTest, EditSendsOnlyTheImageSizeItWasGiven) {
  imaging::EditRequest req;
  req.prompt = "sharpen";
  req.base = {SolidPng(4, 4, 1, 2, 3), "image/png"};
  req.options.image_size = "4K";
  auto body = BuildEditRequest(req, Flash());
  ASSERT_TRUE(body.ok()) << body.error().message;
  EXPECT_EQ(Json::parse(*body)["generationConfig"]["imageConfig"], Json({{"imageSize", "4K"}}));
  req.options.aspect_ratio = "1:1";  // an edit keeps its image's ratio
  EXPECT_EQ(BuildEditRequest(req, Flash()).error().code, ErrorCode::kInvalidArgument);
}

// A Gemini answer as the fake and the real API send it: a thought, a signed text part and a
// signed image.
std::string SignedAnswer(const std::string& image, const std::string& sig_text,
                         const std::string& sig_image) {
  Json parts = Json::array();
  parts.push_back({{"text", "**Planning** the scene"}, {"thought", true}});
  parts.push_back({{"text", "Here it is — ünïcode \"quoted\"."}, {"thoughtSignature", sig_text}});
  parts.push_back({{"inlineData", {{"mimeType", "image/png"}, {"data", Base64Encode(image)}}},
                   {"thoughtSignature", sig_image}});
  Json doc = {{"candidates", Json::array({{{"content", {{"role", "model"}, {"parts", parts}}},
                                           {"finishReason", "STOP"},
                                           {"index", 0}}})},
              {"usageMetadata",
               {{"promptTokenCount", 578},
                {"candidatesTokenCount", 1132},
                {"totalTokenCount", 1857},
                {"thoughtsTokenCount", 147}}}};
  return doc.dump();
}

TEST(WireFormatResponseTest, KeepsUsageFinishReasonSourcesAndReplayData) {
  const std::string png = SolidPng(300, 200, 1, 2, 3);  // big enough for the fast path
  const std::string sig_image(6000, 'S');               // a long signature is lifted, then restored
  Json doc = Json::parse(SignedAnswer(png, "c2lnLXRleHQ=", sig_image));
  doc["candidates"][0]["groundingMetadata"] = {
      {"webSearchQueries", {"weather paris"}},
      {"groundingChunks",
       {{{"web", {{"uri", "https://a.example/1"}, {"title", "a.example"}}}},
        {{"web", {{"uri", "https://b.example/2"}, {"title", "b.example"}}}},
        {{"web", {{"uri", "https://a.example/1"}, {"title", "again"}}}},
        {{"retrievedContext", {{"uri", "gs://x"}}}}}}};
  auto image = ParseGenerateResponse(200, doc.dump());
  ASSERT_TRUE(image.ok()) << image.error().message;
  EXPECT_EQ(image->bytes, png);
  EXPECT_EQ(image->text, "Here it is — ünïcode \"quoted\".");
  EXPECT_EQ(image->finish_reason, "STOP");
  EXPECT_EQ(image->usage, doc["usageMetadata"]);
  ASSERT_EQ(image->sources.size(), 2u);
  EXPECT_EQ(image->sources[0].uri, "https://a.example/1");
  EXPECT_EQ(image->sources[0].title, "a.example");
  EXPECT_EQ(image->sources[1].title, "b.example");
  const Json replay = Json::parse(image->replay);
  EXPECT_EQ(replay["image"], 2);
  EXPECT_EQ(replay["parts"][2]["thoughtSignature"], sig_image);
  EXPECT_FALSE(replay["parts"][2]["inlineData"].contains("data"));  // no second copy
  EXPECT_LT(image->replay.size(), 7000u);
}

// What a chain request replays is what Gemini sent: the model contents of the request equal the
// answers' parts as JSON values (every part, thought parts and signatures included).
TEST(WireFormatRequestTest, ChainReplaysEachAnswerExactlyThenTheInstruction) {
  const std::string first = SolidPng(300, 200, 10, 20, 30);
  const std::string second = SolidJpeg(64, 64, 200, 0, 0);
  const std::string base = SolidPng(8, 8, 0, 0, 0);
  const std::string answer1 = SignedAnswer(first, "dGV4dDE=", std::string(5000, 'A'));
  const std::string answer2 = SignedAnswer(second, "dGV4dDI=", "aW1hZ2Uy");
  auto parsed1 = ParseGenerateResponse(200, answer1);
  auto parsed2 = ParseGenerateResponse(200, answer2);
  ASSERT_TRUE(parsed1.ok() && parsed2.ok());

  imaging::EditRequest req;
  req.prompt = "now make it night";
  req.base = {second, "image/jpeg"};
  req.references.push_back({SolidPng(2, 2, 9, 9, 9), "image/png"});
  imaging::ChainTurn t1;
  t1.user_text = "invert";
  t1.user_image = imaging::EncodedImage{base, "image/png"};
  t1.replay = parsed1->replay;
  t1.image = {first, "image/png"};
  imaging::ChainTurn t2;
  t2.user_text = "add a moon";
  t2.replay = parsed2->replay;
  t2.image = {second, "image/jpeg"};
  req.chain = {t1, t2};
  auto body = BuildEditRequest(req, Flash());
  ASSERT_TRUE(body.ok()) << body.error().message;
  const Json j = Json::parse(*body);
  const Json& contents = j["contents"];
  ASSERT_EQ(contents.size(), 5u);
  EXPECT_EQ(contents[0]["role"], "user");
  EXPECT_EQ(contents[0]["parts"][0]["text"], "invert");
  EXPECT_EQ(*Base64Decode(contents[0]["parts"][1]["inlineData"]["data"].get<std::string>()), base);
  EXPECT_EQ(contents[1]["role"], "model");
  EXPECT_EQ(contents[1]["parts"], Json::parse(answer1)["candidates"][0]["content"]["parts"]);
  EXPECT_EQ(contents[2]["parts"], Json::array({{{"text", "add a moon"}}}));
  EXPECT_EQ(contents[3]["parts"], Json::parse(answer2)["candidates"][0]["content"]["parts"]);
  // The new turn: the instruction and the references; the base is the last answer's image.
  EXPECT_EQ(contents[4]["role"], "user");
  ASSERT_EQ(contents[4]["parts"].size(), 2u);
  EXPECT_EQ(contents[4]["parts"][0]["text"], "now make it night");
  EXPECT_EQ(contents[4]["parts"][1]["inlineData"]["mimeType"], "image/png");
  EXPECT_FALSE(HasNull(j));

  // Too many images for the model's row: 2.5 Flash takes 3 (here 2 + 2 + 1).
  EXPECT_EQ(BuildEditRequest(req, ModelRow("gemini-2.5-flash-image")).error().code,
            ErrorCode::kInvalidArgument);
}

TEST(WireFormatRequestTest, DamagedReplayDataIsDataLossNotARequest) {
  imaging::EditRequest req;
  req.prompt = "again";
  req.base = {SolidPng(4, 4, 1, 1, 1), "image/png"};
  imaging::ChainTurn turn;
  turn.user_text = "first";
  turn.image = req.base;
  for (const char* replay :
       {"", "not json", R"({"parts":[]})", R"({"parts":[{"text":"x"}],"image":0})",
        R"({"parts":[{"inlineData":{}}],"image":3})"}) {
    turn.replay = replay;
    req.chain = {turn};
    auto body = BuildEditRequest(req, Flash());
    ASSERT_FALSE(body.ok()) << replay;
    EXPECT_EQ(body.error().code, ErrorCode::kDataLoss) << replay;
    EXPECT_NE(body.error().message.find("chain turn 1"), std::string::npos);
  }
}

// ---- successful responses --------------------------------------------------------------------

TEST(WireFormatResponseTest, TakesTheLastNonThoughtImageAndSniffsItsType) {
  const std::string draft = SolidPng(2, 2, 9, 9, 9);
  const std::string first = SolidPng(3, 3, 1, 1, 1);
  const std::string final_jpeg = SolidJpeg(5, 5, 200, 0, 0);
  const std::string body = Candidate(
      R"({"text":"thinking","thought":true},)" + ImagePart(draft, "image/png", true) + "," +
      R"({"text":"Here you go.","thoughtSignature":"c2ln"},)" + ImagePart(first, "image/png") +
      "," + ImagePart(final_jpeg, "image/png") + "," + ImagePart(draft, "image/png", true));
  ResponseInfo info;
  auto image = ParseGenerateResponse(200, body, &info);
  ASSERT_TRUE(image.ok()) << image.error().message;
  EXPECT_EQ(image->bytes, final_jpeg);
  EXPECT_EQ(image->mime_type, "image/jpeg");  // labelled image/png
  EXPECT_EQ(image->text, "Here you go.");
  EXPECT_EQ(info.failure.kind, FailureKind::kNone);
}

TEST(WireFormatResponseTest, IgnoresUnknownFieldsAndAcceptsSnakeCase) {
  const std::string png = SolidPng(2, 2, 0, 0, 0);
  const std::string body =
      R"({"turnToken":"x","candidates":[{"future":1,"content":{"parts":[{"inline_data":{"mime_type":"image/png","data":")" +
      Base64Encode(png) +
      R"("},"newThing":{}}]},"finish_reason":"STOP","safetyRatings":[]}],"serviceTier":"s","usageMetadata":{}})";
  auto image = ParseGenerateResponse(200, body);
  ASSERT_TRUE(image.ok()) << image.error().message;
  EXPECT_EQ(image->bytes, png);
  EXPECT_EQ(image->mime_type, "image/png");
}

// ---- error bodies ---------------------------------------------------------------------------

struct Case {
  int status;
  std::string body;
  ErrorCode code;
  FailureKind kind;
  std::string needle;
};

std::string GoogleError(int code, const std::string& status, const std::string& message,
                        const std::string& details = "") {
  return R"({"error":{"code":)" + std::to_string(code) + R"(,"message":")" + message +
         R"(","status":")" + status + "\"" + (details.empty() ? "" : ",\"details\":" + details) +
         "}}";
}

TEST(WireFormatResponseTest, MapsEveryDocumentedHttpError) {
  const std::vector<Case> cases = {
      {400,
       GoogleError(
           400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
           R"([{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}])"),
       ErrorCode::kPermissionDenied, FailureKind::kTerminal,
       "the Gemini API key was rejected (API_KEY_INVALID); check GEMINI_API_KEY"},
      {400, GoogleError(400, "INVALID_ARGUMENT", "Unsupported aspect ratio"),
       ErrorCode::kInvalidArgument, FailureKind::kTerminal, "Unsupported aspect ratio"},
      {400, GoogleError(400, "FAILED_PRECONDITION", "User location is not supported"),
       ErrorCode::kFailedPrecondition, FailureKind::kTerminal, "billing"},
      {402, GoogleError(402, "RESOURCE_EXHAUSTED", "Your prepaid credits are depleted"),
       ErrorCode::kResourceExhausted, FailureKind::kTerminal, "credit"},
      {403, GoogleError(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers"),
       ErrorCode::kPermissionDenied, FailureKind::kTerminal, "GEMINI_API_KEY"},
      {404, GoogleError(404, "NOT_FOUND", "models/nope is not found for API version v1beta"),
       ErrorCode::kNotFound, FailureKind::kTerminal, "models/nope"},
      {408, "Request Timeout", ErrorCode::kUnavailable, FailureKind::kTransient, "408"},
      {429, GoogleError(429, "RESOURCE_EXHAUSTED", "quota"), ErrorCode::kResourceExhausted,
       FailureKind::kTransient, "429 RESOURCE_EXHAUSTED"},
      {500, GoogleError(500, "INTERNAL", "internal"), ErrorCode::kUnavailable,
       FailureKind::kTransient, "Retrying later may help"},
      {502, "<html><body>502 Bad Gateway</body></html>", ErrorCode::kUnavailable,
       FailureKind::kTransient, "non-JSON body: <html>"},
      {503, GoogleError(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
       ErrorCode::kUnavailable, FailureKind::kTransient, "overloaded"},
      {504, "", ErrorCode::kUnavailable, FailureKind::kTransient, "(empty body)"},
      {418, GoogleError(418, "TEAPOT", "short and stout"), ErrorCode::kInternal,
       FailureKind::kTerminal, "418 TEAPOT"},
  };
  for (const Case& c : cases) {
    ResponseInfo info;
    auto r = ParseGenerateResponse(c.status, c.body, &info);
    ASSERT_FALSE(r.ok()) << c.status;
    EXPECT_EQ(r.error().code, c.code) << c.status << " " << r.error().message;
    EXPECT_EQ(info.failure.kind, c.kind) << c.status;
    EXPECT_EQ(info.failure.http_status, c.status);
    EXPECT_NE(r.error().message.find(c.needle), std::string::npos)
        << c.status << ": " << r.error().message;
  }
}

TEST(WireFormatResponseTest, ReadsRetryInfoAndDailyQuotaFrom429) {
  const std::string details =
      R"([{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"m","quotaId":"GenerateContentPaidTierInputTokensPerModelPerMinute"}]},)"
      R"({"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"47.434392449s"}])";
  ResponseInfo info;
  auto r = ParseGenerateResponse(
      429, GoogleError(429, "RESOURCE_EXHAUSTED", "Please retry in 47.434392449s.", details),
      &info);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(info.failure.retry_delay, std::chrono::milliseconds(47435));
  EXPECT_FALSE(info.failure.daily_quota);
  EXPECT_EQ(info.api_status, "RESOURCE_EXHAUSTED");
  EXPECT_NE(r.error().message.find("retry in 48 s"), std::string::npos) << r.error().message;

  const std::string daily =
      R"([{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel"}]}])";
  r = ParseGenerateResponse(429, GoogleError(429, "RESOURCE_EXHAUSTED", "quota", daily), &info);
  EXPECT_TRUE(info.failure.daily_quota);
  EXPECT_FALSE(info.failure.retry_delay.has_value());
  EXPECT_NE(r.error().message.find("daily quota"), std::string::npos);
}

// ---- 200 answers without an image --------------------------------------------------------------

TEST(WireFormatResponseTest, PromptBlockIsAnActionableRefusal) {
  ResponseInfo info;
  auto r = ParseGenerateResponse(
      200, R"({"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":5}})",
      &info);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(r.error().message.rfind("prompt blocked by Gemini (SAFETY)", 0), 0u)
      << r.error().message;
  EXPECT_NE(r.error().message.find("Rephrase"), std::string::npos);
  EXPECT_EQ(info.failure.kind, FailureKind::kTerminal);
}

TEST(WireFormatResponseTest, PolicyFinishReasonsAreRefusalsWithTheFinishMessage) {
  for (const char* reason :
       {"SAFETY", "IMAGE_SAFETY", "PROHIBITED_CONTENT", "IMAGE_PROHIBITED_CONTENT", "BLOCKLIST",
        "SPII", "RECITATION", "IMAGE_RECITATION"}) {
    const std::string body =
        std::string(R"({"candidates":[{"content":{},"finishReason":")") + reason +
        R"(","finishMessage":"Unable to show the generated image.","index":0}]})";
    ResponseInfo info;
    auto r = ParseGenerateResponse(200, body, &info);
    ASSERT_FALSE(r.ok()) << reason;
    EXPECT_EQ(r.error().code, ErrorCode::kFailedPrecondition) << reason;
    EXPECT_NE(r.error().message.find(std::string("(") + reason + ")"), std::string::npos);
    EXPECT_NE(r.error().message.find("Unable to show the generated image."), std::string::npos);
    EXPECT_EQ(info.failure.kind, FailureKind::kTerminal) << reason;
    EXPECT_EQ(info.finish_reason, reason);
  }
}

TEST(WireFormatResponseTest, NoImageReasonsAllowOneRetry) {
  for (const char* reason : {"NO_IMAGE", "IMAGE_OTHER", "OTHER", "MALFORMED_RESPONSE"}) {
    ResponseInfo info;
    auto r = ParseGenerateResponse(
        200, std::string(R"({"candidates":[{"finishReason":")") + reason + R"("}]})", &info);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
    EXPECT_EQ(info.failure.kind, FailureKind::kRetryOnce) << reason;
    EXPECT_NE(r.error().message.find(reason), std::string::npos);
  }
}

TEST(WireFormatResponseTest, MaxTokensSaysTheOutputLimitWasHit) {
  ResponseInfo info;
  auto r = ParseGenerateResponse(200, Candidate(R"({"text":"partial"})", "MAX_TOKENS"), &info);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("output token limit (MAX_TOKENS)"), std::string::npos);
  EXPECT_EQ(info.failure.kind, FailureKind::kTerminal);
}

TEST(WireFormatResponseTest, TextOnlyAnswerCarriesTheModelsText) {
  ResponseInfo info;
  auto r = ParseGenerateResponse(
      200, Candidate(R"({"text":"I can't draw that."},{"text":"x","thought":true})"), &info);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(r.error().message.find("\"I can't draw that.\""), std::string::npos)
      << r.error().message;
  EXPECT_EQ(info.failure.kind, FailureKind::kTerminal);
}

TEST(WireFormatResponseTest, EmptyContentAndMissingCandidatesRetryOnce) {
  for (const char* body :
       {R"({"candidates":[{"content":{},"finishReason":"STOP"}]})",
        R"({"candidates":[{"finishReason":"STOP"}]})", R"({"candidates":[]})", R"({})"}) {
    ResponseInfo info;
    auto r = ParseGenerateResponse(200, body, &info);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(info.failure.kind, FailureKind::kRetryOnce) << body;
  }
}

TEST(WireFormatResponseTest, MalformedJsonBadBase64AndNonImagesAreClearErrors) {
  ResponseInfo info;
  auto r =
      ParseGenerateResponse(200, R"({"candidates":[{"content":{"parts":[{"text":"Here)", &info);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not valid JSON"), std::string::npos);
  EXPECT_EQ(info.failure.kind, FailureKind::kRetryOnce);
  EXPECT_FALSE(ParseGenerateResponse(200, "[1,2]").ok());

  r = ParseGenerateResponse(
      200, Candidate(R"({"inlineData":{"mimeType":"image/png","data":"!!!not base64!!!"}})"),
      &info);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not valid base64"), std::string::npos) << r.error().message;
  EXPECT_EQ(info.failure.kind, FailureKind::kRetryOnce);

  r = ParseGenerateResponse(200, Candidate(ImagePart("plain text bytes", "image/png")), &info);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not a recognised image"), std::string::npos);

  r = ParseGenerateResponse(200, Candidate(R"({"inlineData":{"mimeType":"image/png"}})"), &info);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("without data"), std::string::npos);
}

TEST(WireFormatResponseTest, LongServerMessagesAreTrimmedToOneLine) {
  const std::string message(5000, 'x');
  auto r = ParseGenerateResponse(500, GoogleError(500, "INTERNAL", message + "\\nsecond line"));
  ASSERT_FALSE(r.ok());
  EXPECT_LT(r.error().message.size(), 700u);
  EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace imgmcp::gemini

namespace imgmcp::gemini {
namespace {

// The parser moves long base64 strings out of the way before building the JSON DOM; these check
// that it never changes what a response means.
TEST(WireFormatFastPathTest, LongBase64LookingTextAndSignaturesSurvive) {
  const std::string png = testing::SolidPng(300, 200, 1, 2, 3);
  const std::string b64_text(50000, 'Q');  // a long text part made only of base64 characters
  const std::string parts =
      Json{{"text", b64_text}, {"thoughtSignature", std::string(40000, 'S')}}.dump() + "," +
      ImagePart(png, "image/png");
  ResponseInfo info;
  auto image = ParseGenerateResponse(200, Candidate(parts), &info);
  ASSERT_TRUE(image.ok()) << image.error().message;
  EXPECT_EQ(image->bytes, png);
  EXPECT_EQ(image->text, b64_text);
}

// Long strings that are almost base64: an escaped quote, a backslash escape, and one stray
// character at every offset of a 16-byte block (the vectorised check's step) must all stay text.
TEST(WireFormatFastPathTest, AlmostBase64StringsAreParsedNotLifted) {
  const std::string png = testing::SolidPng(32, 32, 4, 5, 6);
  std::vector<std::string> texts = {std::string(5000, 'A') + "\"" + std::string(5000, 'B'),
                                    std::string(5000, 'C') + "\\n" + std::string(5000, 'D')};
  for (size_t at : {0, 1, 7, 15, 16, 4095, 4096, 4111, 8191}) {
    std::string t(8192, 'z');
    t[at] = '.';
    texts.push_back(t);
  }
  for (const std::string& text : texts) {
    const std::string parts = Json{{"text", text}}.dump() + "," + ImagePart(png, "image/png");
    auto image = ParseGenerateResponse(200, Candidate(parts), nullptr);
    ASSERT_TRUE(image.ok()) << image.error().message;
    EXPECT_EQ(image->bytes, png);
    EXPECT_EQ(image->text, text);
  }
}

TEST(WireFormatFastPathTest, NulEscapesAndTruncationAreHandled) {
  const std::string png = testing::SolidPng(64, 64, 9, 9, 9);
  const std::string with_nul =
      Json{{"text", std::string("a\0b", 3)}}.dump() + "," + ImagePart(png, "image/png");
  auto image = ParseGenerateResponse(200, Candidate(with_nul), nullptr);
  ASSERT_TRUE(image.ok()) << image.error().message;
  EXPECT_EQ(image->bytes, png);
  EXPECT_EQ(image->text, std::string("a\0b", 3));
  const std::string body = Candidate(ImagePart(png, "image/png"));
  auto cut = ParseGenerateResponse(200, body.substr(0, body.size() / 2), nullptr);
  EXPECT_FALSE(cut.ok());
}

}  // namespace
}  // namespace imgmcp::gemini

namespace imgmcp::gemini {
namespace {

// ---- request bodies against a plain model of them ----------------------------------------------
// The builder writes a body as text around each image's base64; these rebuild the same request
// as a JSON value the obvious way (a DOM, and a bit-by-bit base64) and compare the two values.

std::string PlainBase64(const std::string& bytes) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (unsigned char c : bytes) {
    bits = (bits << 8) | c;
    count += 8;
    while (count >= 6) {
      count -= 6;
      out += kAlphabet[(bits >> count) & 63];
    }
  }
  if (count > 0) out += kAlphabet[(bits << (6 - count)) & 63];
  while (out.size() % 4 != 0) out += '=';
  return out;
}

Json ImageValue(const std::string& bytes) {
  const char* mime = imaging::MimeTypeOf(imaging::SniffFormat(bytes));
  return {{"inlineData", {{"mimeType", mime}, {"data", PlainBase64(bytes)}}}};
}

Json ExpectedConfig(const imaging::GenerationOptions& options,
                    const imaging::ModelCapabilities& model, bool generation) {
  Json config = {{"responseModalities", {"TEXT", "IMAGE"}}};
  if (generation) {
    const std::string ratio = options.aspect_ratio.empty() ? "1:1" : options.aspect_ratio;
    config["imageConfig"]["aspectRatio"] = ratio;
  }
  if (!options.image_size.empty()) config["imageConfig"]["imageSize"] = options.image_size;
  if (!options.thinking.empty() && model.thinking == imaging::Support::kYes) {
    std::string level = options.thinking;
    for (char& c : level) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    config["thinkingConfig"] = {{"thinkingLevel", level}};
  }
  return config;
}

Json ExpectedBody(Json contents, const imaging::GenerationOptions& options,
                  const imaging::ModelCapabilities& model, bool generation) {
  Json body = {{"contents", std::move(contents)},
               {"generationConfig", ExpectedConfig(options, model, generation)}};
  if (options.search && model.search == imaging::Support::kYes) {
    body["tools"] = Json::parse(R"([{"google_search":{}}])");
  }
  return body;
}

Json ExpectedEdit(const imaging::EditRequest& req, const imaging::ModelCapabilities& model) {
  Json contents = Json::array();
  for (const imaging::ChainTurn& turn : req.chain) {
    Json user = Json::array({{{"text", turn.user_text}}});
    if (turn.user_image) user.push_back(ImageValue(turn.user_image->bytes));
    contents.push_back({{"role", "user"}, {"parts", user}});
    const Json replay = Json::parse(turn.replay);
    Json parts = replay.at("parts");
    parts.at(replay.at("image").get<size_t>())["inlineData"]["data"] =
        PlainBase64(turn.image.bytes);
    contents.push_back({{"role", "model"}, {"parts", parts}});
  }
  Json last = Json::array({{{"text", req.prompt}}});
  if (req.chain.empty()) last.push_back(ImageValue(req.base.bytes));
  for (const imaging::EncodedImage& ref : req.references) last.push_back(ImageValue(ref.bytes));
  contents.push_back({{"role", "user"}, {"parts", last}});
  return ExpectedBody(std::move(contents), req.options, model, /*generation=*/false);
}

Json ExpectedGenerate(const imaging::GenerateRequest& req,
                      const imaging::ModelCapabilities& model) {
  Json parts = Json::array({{{"text", req.prompt}}});
  for (const imaging::EncodedImage& ref : req.references) parts.push_back(ImageValue(ref.bytes));
  Json contents = Json::array({{{"role", "user"}, {"parts", parts}}});
  return ExpectedBody(std::move(contents), req.options, model, /*generation=*/true);
}

// `image` grown with filler bytes until its length leaves `remainder` when divided by 3, so the
// base64 ends in each of its three ways (no padding, "==", "=").
std::string WithLengthMod3(std::string image, size_t remainder) {
  while (image.size() % 3 != remainder) image.push_back(static_cast<char>(image.size() * 31));
  return image;
}

// Replay data as ParseGenerateResponse keeps it, and hand-written shapes it could also hold: the
// image part first with more keys after it, an inlineData holding nothing but its data, and an
// image part with no other key.
std::vector<std::string> Replays() {
  std::vector<std::string> out;
  auto parsed = ParseGenerateResponse(
      200, SignedAnswer(SolidPng(300, 200, 1, 2, 3), "dGV4dA==", std::string(5000, 'S')));
  if (!parsed.ok()) std::abort();
  out.push_back(parsed->replay);
  out.push_back(
      R"({"parts":[{"inlineData":{"mimeType":"image/png","zeta":"z"},"thoughtSignature":"c2ln",)"
      R"("alpha":[1,{"b":null}]},{"text":"after \"it\" ✓"}],"image":0})");
  out.push_back(R"({"parts":[{"text":"one"},{"inlineData":{}}],"image":1})");
  out.push_back(R"({"parts":[{"inlineData":{"mimeType":"image/jpeg"}}],"image":0})");
  return out;
}

imaging::EditRequest ChainEdit(int turns, size_t remainder) {
  const std::vector<std::string> replays = Replays();
  imaging::EditRequest req;
  req.prompt = "now \"night\"\n with ünïcode \\ and a tab\t";
  for (int t = 0; t < turns; ++t) {
    imaging::ChainTurn turn;
    turn.user_text = "edit " + std::to_string(t + 1) + " — \"quoted\"";
    if (t % 2 == 0) {
      turn.user_image = imaging::EncodedImage{
          WithLengthMod3(SolidJpeg(16, 16, 0, 0, t * 40), (remainder + t) % 3), "image/jpeg"};
    }
    turn.replay = replays[t % replays.size()];
    const int size = 20 + 7 * t;
    turn.image = {WithLengthMod3(SolidPng(size, size, t, 2, 3), (remainder + 2 * t) % 3), ""};
    req.chain.push_back(std::move(turn));
  }
  req.base = req.chain.empty()
                 ? imaging::EncodedImage{WithLengthMod3(SolidPng(9, 9, 4, 4, 4), remainder), ""}
                 : req.chain.back().image;
  req.references.push_back({WithLengthMod3(SolidPng(3, 5, 7, 7, 7), (remainder + 1) % 3), ""});
  return req;
}

TEST(WireFormatRequestTest, ChainBodiesEqualThePlainModelForEveryTurnCountAndLength) {
  for (int turns : {0, 1, 2, 4}) {
    for (size_t remainder : {0, 1, 2}) {
      imaging::EditRequest req = ChainEdit(turns, remainder);
      for (int variant = 0; variant < 3; ++variant) {
        req.options = {};
        if (variant >= 1) req.options.image_size = "2K";
        if (variant == 2) {
          req.options.thinking = "high";
          req.options.search = true;
        }
        SCOPED_TRACE("turns " + std::to_string(turns) + ", length mod 3 " +
                     std::to_string(remainder) + ", variant " + std::to_string(variant));
        auto body = BuildEditRequest(req, Flash());
        ASSERT_TRUE(body.ok()) << body.error().message;
        EXPECT_EQ(Json::parse(*body), ExpectedEdit(req, Flash()));
      }
    }
  }
}

TEST(WireFormatRequestTest, GenerateBodiesEqualThePlainModel) {
  for (size_t remainder : {0, 1, 2}) {
    imaging::GenerateRequest req;
    req.prompt = "a \"poster\"";
    for (int r = 0; r < static_cast<int>(remainder) + 1; ++r) {
      req.references.push_back({WithLengthMod3(SolidPng(5, 3, r, r, r), (remainder + r) % 3), ""});
    }
    auto plain = BuildGenerateRequest(req, Lite());
    ASSERT_TRUE(plain.ok()) << plain.error().message;
    EXPECT_EQ(Json::parse(*plain), ExpectedGenerate(req, Lite()));
    req.options.aspect_ratio = "4:1";
    req.options.image_size = "512";
    req.options.thinking = "minimal";
    req.options.search = true;
    auto full = BuildGenerateRequest(req, Flash());
    ASSERT_TRUE(full.ok()) << full.error().message;
    EXPECT_EQ(Json::parse(*full), ExpectedGenerate(req, Flash()));
  }
}

}  // namespace
}  // namespace imgmcp::gemini
