// The Gemini Batch API wire format (gemini_client/batch_wire.h): the job body with its requests
// inlined under their keys, the split into jobs by count and size, and the operation read back —
// its state, a failed job's message, and each answer under its key, which ParseGenerateResponse
// turns into an image or an actionable error like an immediate answer.
#include "gemini_client/batch_wire.h"

#include <gtest/gtest.h>

#include "common/base64.h"
#include "common/json.h"
#include "gemini_client/wire_format.h"
#include "tests/unit/gemini_client/test_images.h"

namespace imgmcp::gemini {
namespace {

std::string ImageResponse(const std::string& png) {
  Json doc = {
      {"candidates", Json::array({{{"content",
                                    {{"role", "model"},
                                     {"parts", Json::array({{{"inlineData",
                                                              {{"mimeType", "image/png"},
                                                               {"data", Base64Encode(png)}}}}})}}},
                                   {"finishReason", "STOP"}}})},
      {"usageMetadata", {{"promptTokenCount", 7}, {"candidatesTokenCount", 1120}}}};
  return doc.dump();
}

TEST(BatchWireTest, TheJobBodyInlinesEachRequestUnderItsKey) {
  auto body = BuildBatchCreate("imgmcp batch",
                               {{"t-1", R"({"contents": [1]})"}, {"t-2", R"({"contents": [2]})"}});
  ASSERT_TRUE(body.ok()) << body.error().message;
  const Json doc = Json::parse(*body);
  EXPECT_EQ(doc["batch"]["display_name"], "imgmcp batch");
  const Json& requests = doc["batch"]["input_config"]["requests"]["requests"];
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0]["request"], Json::parse(R"({"contents": [1]})"));
  EXPECT_EQ(requests[0]["metadata"]["key"], "t-1");
  EXPECT_EQ(requests[1]["metadata"]["key"], "t-2");
}

TEST(BatchWireTest, AJobBodyRefusesWhatCouldNotBeAnsweredByKey) {
  EXPECT_EQ(BuildBatchCreate("x", {}).error().message, "a batch needs a request");
  EXPECT_EQ(BuildBatchCreate("x", {{"a", "{}"}, {"a", "{}"}}).error().message,
            "batch key \"a\" is given twice");
  EXPECT_EQ(BuildBatchCreate("x", {{"a b", "{}"}}).error().message,
            "batch key \"a b\" is not 1-64 of A-Z a-z 0-9 - _");
  EXPECT_EQ(BuildBatchCreate("x", {{std::string(65, 'k'), "{}"}}).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(BuildBatchCreate("x", {{"a", "[1]"}}).error().message,
            "the request of batch key \"a\" is not a JSON object");
}

TEST(BatchWireTest, RequestsSplitIntoJobsByCountAndByBytesInOrder) {
  using Jobs = std::vector<std::vector<size_t>>;
  EXPECT_EQ(*SplitBatch({10, 10, 10, 10, 10}, 2), (Jobs{{0, 1}, {2, 3}, {4}}));
  EXPECT_EQ(*SplitBatch({}, 100), Jobs{});
  const size_t room = 1000;
  const size_t fits_two = (room - kBatchEnvelopeBytes) / 2 - kBatchRequestOverheadBytes;
  EXPECT_EQ(*SplitBatch({fits_two, fits_two, fits_two, 1}, 100, room), (Jobs{{0, 1}, {2, 3}}));
  EXPECT_EQ(*SplitBatch({fits_two + 1, fits_two}, 100, room), (Jobs{{0}, {1}}));
  auto too_large = SplitBatch({1, room}, 100, room);
  ASSERT_FALSE(too_large.ok());
  EXPECT_EQ(too_large.error().message,
            "request 1 (1000 bytes) is larger than a batch job may carry (1000 bytes)");
}

TEST(BatchWireTest, APendingOperationNamesTheJobAndItsState) {
  auto job = ParseBatchOperation(200, R"({"name": "batches/abc", "metadata": {
      "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
      "name": "batches/abc", "state": "BATCH_STATE_PENDING"}})");
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ(job->name, "batches/abc");
  EXPECT_EQ(job->state, BatchState::kPending);
  EXPECT_FALSE(IsFinal(job->state));
  EXPECT_TRUE(job->answers.empty());
  auto running =
      ParseBatchOperation(200, R"({"name": "batches/abc", "state": "BATCH_STATE_RUNNING"})");
  ASSERT_TRUE(running.ok()) << running.error().message;  // the batch resource itself
  EXPECT_EQ(running->state, BatchState::kRunning);
  EXPECT_STREQ(BatchStateName(running->state), "running");
}

TEST(BatchWireTest, AFinishedJobsAnswersReadLikeImmediateOnes) {
  const std::string png = testing::SolidPng(8, 8, 200, 10, 10);
  const Json op = {
      {"name", "batches/j1"},
      {"done", true},
      {"metadata", {{"name", "batches/j1"}, {"state", "BATCH_STATE_SUCCEEDED"}}},
      {"response",
       {{"@type",
         "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput"},
        {"inlinedResponses",
         {{"inlinedResponses",
           Json::array(
               {{{"response", Json::parse(ImageResponse(png))}, {"metadata", {{"key", "t-1"}}}},
                {{"error",
                  {{"code", 8}, {"message", "Quota exceeded"}, {"status", "RESOURCE_EXHAUSTED"}}},
                 {"metadata", {{"key", "t-2"}}}}})}}}}}};
  auto job = ParseBatchOperation(200, op.dump());
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ(job->state, BatchState::kSucceeded);
  EXPECT_TRUE(IsFinal(job->state));
  ASSERT_EQ(job->answers.size(), 2u);
  EXPECT_EQ(job->answers[0].key, "t-1");
  auto image = ParseGenerateResponse(job->answers[0].http_status, job->answers[0].body);
  ASSERT_TRUE(image.ok()) << image.error().message;
  EXPECT_EQ(image->bytes, png);
  EXPECT_EQ(image->usage["candidatesTokenCount"], 1120);  // priced like any answer
  EXPECT_EQ(job->answers[1].key, "t-2");
  EXPECT_EQ(job->answers[1].http_status, 429);
  auto refused = ParseGenerateResponse(job->answers[1].http_status, job->answers[1].body);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("Quota exceeded"), std::string::npos)
      << refused.error().message;
}

TEST(BatchWireTest, AFailedJobSaysWhy) {
  auto job = ParseBatchOperation(200, R"({"name": "batches/f", "done": true,
      "metadata": {"name": "batches/f", "state": "BATCH_STATE_FAILED"},
      "error": {"code": 3, "message": "the input is malformed"}})");
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ(job->state, BatchState::kFailed);
  EXPECT_EQ(job->error, "the input is malformed");
  for (const char* state : {"BATCH_STATE_EXPIRED", "BATCH_STATE_CANCELLED"}) {
    auto ended = ParseBatchOperation(
        200, Json{{"name", "batches/e"}, {"metadata", {{"state", state}}}}.dump());
    ASSERT_TRUE(ended.ok()) << ended.error().message;
    EXPECT_TRUE(IsFinal(ended->state)) << state;
  }
}

TEST(BatchWireTest, HttpErrorsAndUnreadableAnswersAreTyped) {
  const std::string busy = R"({"error": {"code": 503, "message": "overloaded"}})";
  EXPECT_EQ(ParseBatchOperation(503, busy).error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(ParseBatchOperation(429, "").error().code, ErrorCode::kUnavailable);
  auto gone = ParseBatchOperation(404, R"({"error": {"code": 404, "message": "no such batch"}})");
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(gone.error().message, "Gemini Batch API: no such batch");
  EXPECT_EQ(ParseBatchOperation(403, "{}").error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(ParseBatchOperation(200, "not json").error().code, ErrorCode::kDataLoss);
  EXPECT_EQ(ParseBatchOperation(200, R"({"name": "batches/x", "state": "SOMETHING"})").error().code,
            ErrorCode::kDataLoss);
  EXPECT_EQ(ParseBatchOperation(200, R"({"name": "batches/x", "done": true,
      "metadata": {"state": "BATCH_STATE_SUCCEEDED"},
      "response": {"inlinedResponses": {"inlinedResponses": [{"response": {}}]}}})")
                .error()
                .message,
            "a batch answer has no metadata.key");
}

TEST(BatchWireTest, AListPageReadsEachJobWithItsDisplayNameAndTheNextToken) {
  const Json page = {{"operations", Json::array({{{"name", "batches/b2"},
                                                  {"metadata",
                                                   {{"name", "batches/b2"},
                                                    {"displayName", "imgmcp-g2"},
                                                    {"state", "BATCH_STATE_RUNNING"}}}},
                                                 {{"name", "batches/b1"},
                                                  {"metadata",
                                                   {{"name", "batches/b1"},
                                                    {"displayName", "imgmcp-g1"},
                                                    {"state", "BATCH_STATE_SUCCEEDED"}}}}})},
                     {"nextPageToken", "b1"}};
  auto listed = ParseBatchList(200, page.dump());
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  ASSERT_EQ(listed->jobs.size(), 2u);
  EXPECT_EQ(listed->jobs[0].display_name, "imgmcp-g2");
  EXPECT_EQ(listed->jobs[1].state, BatchState::kSucceeded);
  EXPECT_EQ(listed->next_page_token, "b1");
  auto empty = ParseBatchList(200, "{}");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->jobs.empty());
  EXPECT_EQ(empty->next_page_token, "");
  EXPECT_EQ(ParseBatchList(200, R"({"operations": {}})").error().code, ErrorCode::kDataLoss);
  EXPECT_EQ(ParseBatchList(503, "{}").error().code, ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace imgmcp::gemini
