// BatchClient against the in-process FakeGeminiServer on an OS-chosen 127.0.0.1 port: a job
// created, read through its states to its answers, cancelled; and the errors a poller acts on.
#include "gemini_client/batch_client.h"

#include <gtest/gtest.h>

#include <stop_token>
#include <string>
#include <vector>

#include "common/json.h"
#include "gemini_client/models.h"
#include "gemini_client/wire_format.h"
#include "imaging/codec.h"
#include "tests/fake_gemini/fake_gemini_server.h"

namespace imgmcp::gemini {
namespace {

constexpr char kBatchKey[] = "batch-key-S3CRET-never-shown-0815";

class BatchClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto port = server_.Start("127.0.0.1", 0);
    ASSERT_TRUE(port.ok()) << port.error().message;
    options_.api_key = kBatchKey;
    options_.base_url = server_.base_url();
  }

  std::unique_ptr<BatchClient> MakeClient() {
    auto client = BatchClient::Create(options_, &SendHttp);
    EXPECT_TRUE(client.ok()) << client.error().message;
    return client.ok() ? std::move(client).value() : nullptr;
  }

  // A generateContent body for `prompt` on the default model, under `key`.
  static BatchRequest Request(const std::string& key, const std::string& prompt) {
    imaging::GenerateRequest req;
    req.prompt = prompt;
    req.options.aspect_ratio = "1:1";
    auto body =
        BuildGenerateRequest(req, *imaging::FindModel(BuiltInGeminiModels(), kDefaultModel));
    EXPECT_TRUE(body.ok()) << body.error().message;
    return {key, body.ok() ? *body : ""};
  }

  // The fake's log entries of `rpc`.
  std::vector<Json> Logged(const std::string& rpc) const {
    std::vector<Json> out;
    for (const Json& entry : server_.Requests()) {
      if (entry.value("rpc", "") == rpc) out.push_back(entry);
    }
    return out;
  }

  fake_gemini::FakeGeminiServer server_;
  GeminiClientOptions options_;
};

TEST_F(BatchClientTest, AJobIsCreatedReadThroughItsStatesAndAnswersEachRequestAsAnImage) {
  auto client = MakeClient();
  ASSERT_NE(client, nullptr);
  auto job = client->Submit(
      kDefaultModel, "imgmcp-group-1",
      {Request("t-1", "a red fox"), Request("t-2", "a blue whale"), Request("t-3", "a green frog")},
      {});
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_TRUE(IsBatchJobName(job->name)) << job->name;
  EXPECT_EQ(job->state, BatchState::kPending);
  EXPECT_TRUE(job->answers.empty());

  // The fake's default schedule: running at the first read, succeeded at the second.
  auto running = client->Read(job->name, {});
  ASSERT_TRUE(running.ok()) << running.error().message;
  EXPECT_EQ(running->state, BatchState::kRunning);
  auto done = client->Read(job->name, {});
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(done->state, BatchState::kSucceeded);
  ASSERT_EQ(done->answers.size(), 3u);
  std::vector<std::string> keys;
  for (const BatchAnswer& answer : done->answers) {
    keys.push_back(answer.key);
    auto image = ParseGenerateResponse(answer.http_status, answer.body);
    ASSERT_TRUE(image.ok()) << answer.key << ": " << image.error().message;
    EXPECT_TRUE(imaging::Decode(image->bytes).ok()) << answer.key;
    EXPECT_TRUE(image->usage.is_object() && image->usage.contains("candidatesTokenCount"))
        << answer.key << ": the answer carries its usage, to be priced";
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"t-1", "t-2", "t-3"}));

  // One create carrying the three requests under their keys, two reads, every call with the key.
  const auto created = Logged("batches.create");
  ASSERT_EQ(created.size(), 1u);
  EXPECT_EQ(created[0]["path"],
            std::string("/v1beta/models/") + kDefaultModel + ":batchGenerateContent");
  std::vector<std::string> sent;
  for (const Json& item : Logged("batchGenerateContent")) sent.push_back(item["batch_key"]);
  EXPECT_EQ(sent, keys);
  const auto reads = Logged("batches.get");
  ASSERT_EQ(reads.size(), 2u);
  EXPECT_EQ(reads[0]["method"], "GET");
  EXPECT_EQ(reads[0]["path"], "/v1beta/" + job->name);
  for (const Json& entry : server_.Requests()) {
    if (entry.value("method", "") != "BATCH") EXPECT_TRUE(entry["api_key_present"]) << entry;
  }
}

TEST_F(BatchClientTest, ARequestsErrorComesBackUnderItsKeyAndTheOthersStillAnswer) {
  ASSERT_TRUE(
      server_
          .PushScript(Json::parse(R"([{}, {"status": 400, "message": "The prompt was refused"}])"))
          .ok());
  auto client = MakeClient();
  ASSERT_NE(client, nullptr);
  auto job = client->Submit(kDefaultModel, "imgmcp-group-2",
                            {Request("ok", "a cat"), Request("refused", "something")}, {});
  ASSERT_TRUE(job.ok()) << job.error().message;
  ASSERT_TRUE(client->Read(job->name, {}).ok());
  auto done = client->Read(job->name, {});
  ASSERT_TRUE(done.ok()) << done.error().message;
  ASSERT_EQ(done->answers.size(), 2u);
  EXPECT_TRUE(ParseGenerateResponse(done->answers[0].http_status, done->answers[0].body).ok());
  EXPECT_EQ(done->answers[1].key, "refused");
  EXPECT_EQ(done->answers[1].http_status, 400);
  auto refused = ParseGenerateResponse(done->answers[1].http_status, done->answers[1].body);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("The prompt was"), std::string::npos)
      << refused.error().message;
}

TEST_F(BatchClientTest, ACancelledJobAndAnExpiredOneSayTheirState) {
  auto client = MakeClient();
  ASSERT_NE(client, nullptr);
  auto job = client->Submit(kDefaultModel, "imgmcp-group-3", {Request("t-1", "a cat")}, {});
  ASSERT_TRUE(job.ok()) << job.error().message;
  auto cancelled = client->Cancel(job->name, {});
  ASSERT_TRUE(cancelled.ok()) << cancelled.error().message;
  auto read = client->Read(job->name, {});
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->state, BatchState::kCancelled);
  EXPECT_TRUE(read->answers.empty());
  ASSERT_EQ(Logged("batches.cancel").size(), 1u);
  EXPECT_EQ(Logged("batches.cancel")[0]["path"], "/v1beta/" + job->name + ":cancel");

  ASSERT_TRUE(server_.Configure(Json::parse(R"({"batch_states": ["pending", "expired"]})")).ok());
  auto late = client->Submit(kDefaultModel, "imgmcp-group-4", {Request("t-1", "a dog")}, {});
  ASSERT_TRUE(late.ok()) << late.error().message;
  auto expired = client->Read(late->name, {});
  ASSERT_TRUE(expired.ok()) << expired.error().message;
  EXPECT_EQ(expired->state, BatchState::kExpired);
  EXPECT_TRUE(IsFinal(expired->state));
}

TEST_F(BatchClientTest, ErrorsAreTypedForThePollerAndNeverShowTheKey) {
  auto client = MakeClient();
  ASSERT_NE(client, nullptr);
  std::vector<std::string> messages;
  auto gone = client->Read("batches/no-such-job", {});
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound) << gone.error().message;
  messages.push_back(gone.error().message);

  // A name that is not one is refused before anything is sent.
  const size_t before = server_.RequestCount();
  for (const char* bad : {"batches/../models", "operations/x", "batches/", "batches/a?b=c"}) {
    auto refused = client->Read(bad, {});
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(server_.RequestCount(), before);

  auto unknown_model = client->Submit("gemini-no-such-model", "g", {Request("t", "x")}, {});
  ASSERT_FALSE(unknown_model.ok());
  EXPECT_EQ(unknown_model.error().code, ErrorCode::kInvalidArgument);

  options_.api_key = "bad-key";  // the fake's invalid key
  auto rejected = MakeClient()->Submit(kDefaultModel, "g", {Request("t", "x")}, {});
  ASSERT_FALSE(rejected.ok());
  EXPECT_NE(rejected.error().message.find("API key not valid"), std::string::npos)
      << rejected.error().message;

  server_.Stop();
  auto down = client->Read("batches/anything", {});
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.error().code, ErrorCode::kUnavailable) << down.error().message;
  messages.push_back(down.error().message);
  for (const std::string& m : messages) EXPECT_EQ(m.find(kBatchKey), std::string::npos) << m;
}

TEST_F(BatchClientTest, AModelWithoutABatchPriceTakesNoBatchJob) {
  options_.model_table = BuiltInGeminiModels();
  for (imaging::ModelCapabilities& row : options_.model_table) {
    if (row.id == kDefaultModel) row.batch_price_factor = 0;
  }
  auto client = MakeClient();
  ASSERT_NE(client, nullptr);
  auto job = client->Submit(kDefaultModel, "g", {Request("t", "x")}, {});
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(job.error().message.find("takes no batch delivery"), std::string::npos)
      << job.error().message;
  EXPECT_TRUE(Logged("batches.create").empty());
}

// A poller that died after creating a job but before recording it finds the job by the name it
// gave it, through the pages of the list, instead of creating it a second time.
TEST_F(BatchClientTest, AJobIsFoundByItsDisplayNameAcrossPages) {
  auto client = MakeClient();
  ASSERT_NE(client, nullptr);
  std::string wanted;
  for (int i = 0; i < 5; ++i) {  // three pages of two
    auto job = client->Submit(kDefaultModel, "imgmcp-group-" + std::to_string(i),
                              {Request("t", "a cat")}, {});
    ASSERT_TRUE(job.ok()) << job.error().message;
    if (i == 1) wanted = job->name;  // an old one: on the second page
  }
  auto found = client->FindByDisplayName("imgmcp-group-1", {}, 10, /*page_size=*/2);
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->name, wanted);
  EXPECT_EQ((*found)->display_name, "imgmcp-group-1");
  EXPECT_EQ((*found)->state, BatchState::kPending) << "listing does not move a job along";
  EXPECT_EQ(Logged("batches.list").size(), 2u);

  auto missing = client->FindByDisplayName("imgmcp-group-never", {}, 10, 2);
  ASSERT_TRUE(missing.ok()) << missing.error().message;
  EXPECT_FALSE(missing->has_value());
  EXPECT_EQ(Logged("batches.list").size(), 5u) << "two, then every page of three";
  auto one_page = client->FindByDisplayName("imgmcp-group-1", {}, /*max_pages=*/1, 2);
  ASSERT_TRUE(one_page.ok());
  EXPECT_FALSE(one_page->has_value()) << "only the pages asked for are read";
}

TEST_F(BatchClientTest, VertexAiIsRefusedWithTheReason) {
  options_.vertex = VertexTarget{"my-project-123", "global", false};
  auto client = BatchClient::Create(options_, &SendHttp);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(client.error().message.find("Cloud Storage or BigQuery"), std::string::npos)
      << client.error().message;
}

}  // namespace
}  // namespace imgmcp::gemini
