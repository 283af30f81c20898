// BatchPoller against a real SQLite store and the in-process Gemini fake (its Batch API), the
// clock the test's: tasks grouped once their window passed into one job keyed by task id, the job
// read on its schedule, every task handed its answer when the job ends; a job created but never
// recorded found by its name instead of created again; a job that expired fails its tasks; and
// one poller at a time.
#include "server/app/batch_poller.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "common/json.h"
#include "gemini_client/models.h"
#include "gemini_client/wire_format.h"
#include "imaging/generation_params.h"
#include "session/sqlite/sqlite_session_store.h"
#include "tests/fake_gemini/fake_gemini_server.h"
#include "tests/unit/session/test_util.h"

namespace imgmcp::app {
namespace {

using session::testing::FakeClock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Records what the poller hands on, and ends each task as the tool layer would.
class RecordingWork final : public BatchTaskWork {
 public:
  explicit RecordingWork(session::SessionStore& store) : store_(store) {}

  Result<std::string> RequestBody(const session::TaskRecord& task) override {
    const Json call = Json::parse(task.request_json);
    const std::string prompt = call["arguments"].value("prompt", "");
    if (prompt == "refuse") return MakeError(ErrorCode::kInvalidArgument, "prompt refused here");
    imaging::GenerateRequest req;
    req.prompt = prompt;
    req.options.aspect_ratio = "1:1";
    return gemini::BuildGenerateRequest(
        req, *imaging::FindModel(gemini::BuiltInGeminiModels(), gemini::kDefaultModel));
  }

  void Finish(const session::TaskRecord& task, const Result<gemini::BatchAnswer>& answer) override {
    session::TaskUpdate end;
    end.task_id = task.task_id;
    end.owner = task.owner;
    end.status = session::TaskStatus::kCompleted;
    if (answer.ok()) {
      images.insert_or_assign(task.task_id,
                              gemini::ParseGenerateResponse(answer->http_status, answer->body));
      end.result_json = "{}";
    } else {
      errors[task.task_id] = answer.error().message;
      end.status = session::TaskStatus::kFailed;
      end.error_json = "{}";
    }
    EXPECT_TRUE(store_.UpdateTask(end).ok());
  }

  void Progress(const session::TaskRecord& task, const std::string& message) override {
    said[task.task_id].push_back(message);
  }

  std::map<std::string, Result<imaging::BackendImage>> images;
  std::map<std::string, std::string> errors;
  std::map<std::string, std::vector<std::string>> said;  // Progress, by task

 private:
  session::SessionStore& store_;
};

class BatchPollerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start("127.0.0.1", 0).ok());
    gemini::GeminiClientOptions options;
    options.api_key = "batch-poller-test-key";
    options.base_url = server_.base_url();
    auto client = gemini::BatchClient::Create(options, &gemini::SendHttp);
    ASSERT_TRUE(client.ok()) << client.error().message;
    client_ = std::move(*client);
    store_ = Open();
    ASSERT_NE(store_, nullptr);
    work_ = std::make_unique<RecordingWork>(*store_);
  }

  std::unique_ptr<session::sqlite::SqliteSessionStore> Open() {
    session::StoreOptions options;
    options.data_dir = dir_.path();
    auto store = session::sqlite::SqliteSessionStore::Open(options, clock_);
    EXPECT_TRUE(store.ok()) << store.error().message;
    return store.ok() ? std::move(*store) : nullptr;
  }

  BatchPoller MakePoller(session::ChainStore& store) {
    return BatchPoller(store.batch_tasks(), *client_, *work_, clock_, options_);
  }

  std::string CreateTask(const std::string& prompt) {
    session::NewTask task;
    task.owner = "o";
    task.tool = "generate_image";
    task.request_json =
        Json{{"name", "generate_image"}, {"arguments", {{"prompt", prompt}}}}.dump();
    task.batch_model = gemini::kDefaultModel;
    auto created = store_->CreateTask(task);
    EXPECT_TRUE(created.ok()) << created.error().message;
    return created.ok() ? created->task_id : "";
  }

  session::TaskStatus Status(const std::string& id) {
    auto task = store_->GetTask(id, "o");
    EXPECT_TRUE(task.ok() && task->has_value());
    return task.ok() && task->has_value() ? (*task)->status : session::TaskStatus::kWorking;
  }

  size_t Logged(const std::string& rpc) const {
    size_t n = 0;
    for (const Json& entry : server_.Requests()) n += entry.value("rpc", "") == rpc ? 1 : 0;
    return n;
  }

  session::testing::TempDir dir_;
  FakeClock clock_;
  fake_gemini::FakeGeminiServer server_;
  std::unique_ptr<gemini::BatchClient> client_;
  std::unique_ptr<session::sqlite::SqliteSessionStore> store_;
  std::unique_ptr<RecordingWork> work_;
  BatchPollerOptions options_;
};

TEST_F(BatchPollerTest, TasksOfAWindowBecomeOneJobReadOnItsScheduleAndEachGetsItsAnswer) {
  const std::vector<std::string> ids = {CreateTask("a fox"), CreateTask("a whale"),
                                        CreateTask("refuse")};
  BatchPoller poller = MakePoller(*store_);
  ASSERT_TRUE(poller.RunOnce({}).ok());
  EXPECT_TRUE(poller.leading());
  EXPECT_EQ(Logged("batches.create"), 0u) << "the window (10 s) has not passed";

  clock_.Advance(options_.window);
  ASSERT_TRUE(poller.RunOnce({}).ok());
  EXPECT_EQ(Logged("batches.create"), 1u);
  EXPECT_EQ(Logged("batchGenerateContent"), 2u) << "one job with the two requests it could build";
  EXPECT_EQ(work_->errors.at(ids[2]), "prompt refused here");
  EXPECT_EQ(Status(ids[2]), session::TaskStatus::kFailed);

  // Not read before its first interval (30 s, jittered by at most 10 %), then read each time due.
  ASSERT_TRUE(poller.RunOnce({}).ok());
  EXPECT_EQ(Logged("batches.get"), 0u);
  for (int read = 1; read <= 2; ++read) {
    clock_.Advance(
        std::chrono::duration_cast<milliseconds>(options_.first_poll * 1.1 * (1 << (read - 1))));
    ASSERT_TRUE(poller.RunOnce({}).ok());
    EXPECT_EQ(Logged("batches.get"), static_cast<size_t>(read));
  }
  // The fake's schedule: running, then succeeded — every task has its image, and was told where
  // its job was each time that changed.
  for (size_t i = 0; i < 2; ++i) {
    const std::vector<std::string>& said = work_->said[ids[i]];
    ASSERT_EQ(said.size(), 2u) << i;
    EXPECT_EQ(said[0].rfind("in Gemini batch batches/", 0), 0u) << said[0];
    EXPECT_NE(said[0].find(": pending"), std::string::npos) << said[0];
    EXPECT_NE(said[1].find(": running"), std::string::npos) << said[1];
    ASSERT_EQ(work_->images.count(ids[i]), 1u) << i;
    EXPECT_TRUE(work_->images.at(ids[i]).ok()) << work_->images.at(ids[i]).error().message;
    EXPECT_EQ(Status(ids[i]), session::TaskStatus::kCompleted);
  }
  EXPECT_TRUE(work_->said[ids[2]].empty()) << "a task failed at once is in no job";
  ASSERT_TRUE(store_->batch_tasks().Open().ok());
  EXPECT_TRUE(store_->batch_tasks().Open()->empty());
  clock_.Advance(seconds(3600));
  ASSERT_TRUE(poller.RunOnce({}).ok());
  EXPECT_EQ(Logged("batches.get"), 2u) << "an ended job is not read again";
}

// A window opens with the oldest call waiting: a call that came later in it goes into the same
// job, though its own window has not passed.
TEST_F(BatchPollerTest, ACallLaterInTheWindowJoinsItsJob) {
  const std::string first = CreateTask("a fox");
  clock_.Advance(seconds(6));
  const std::string second = CreateTask("a whale");
  BatchPoller poller = MakePoller(*store_);
  ASSERT_TRUE(poller.RunOnce({}).ok());
  EXPECT_EQ(Logged("batches.create"), 0u);
  clock_.Advance(seconds(4));  // the first call's 10 s have passed, the second's not
  ASSERT_TRUE(poller.RunOnce({}).ok());
  EXPECT_EQ(Logged("batches.create"), 1u);
  EXPECT_EQ(Logged("batchGenerateContent"), 2u);
  auto open = store_->batch_tasks().Open();
  ASSERT_TRUE(open.ok() && open->size() == 2u);
  EXPECT_EQ((*open)[0].batch_job, (*open)[1].batch_job);
  EXPECT_FALSE((*open)[0].batch_job.empty());
}

// The calls of a window beyond what one job's body may hold (the API's inline limit) wait for
// the next job, which the next round makes.
TEST_F(BatchPollerTest, CallsBeyondAJobsSizeGoIntoTheNextJob) {
  const std::vector<std::string> ids = {CreateTask("a fox"), CreateTask("a cat"),
                                        CreateTask("a owl")};
  auto sample = work_->RequestBody(*store_->GetTask(ids[0], "o").value());
  ASSERT_TRUE(sample.ok());
  options_.max_job_bytes =
      gemini::kBatchEnvelopeBytes + 2 * (sample->size() + gemini::kBatchRequestOverheadBytes) + 1;
  clock_.Advance(options_.window);
  BatchPoller poller = MakePoller(*store_);
  ASSERT_TRUE(poller.RunOnce({}).ok());
  EXPECT_EQ(Logged("batches.create"), 1u);
  EXPECT_EQ(Logged("batchGenerateContent"), 2u) << "two fit the job";
  ASSERT_TRUE(poller.RunOnce({}).ok());
  EXPECT_EQ(Logged("batches.create"), 2u) << "the third makes the next job";
  const Json jobs = server_.Batches();
  ASSERT_EQ(jobs.size(), 2u) << jobs.dump();
  EXPECT_EQ(jobs[0]["requests"].get<int>() + jobs[1]["requests"].get<int>(), 3) << jobs.dump();
  auto open = store_->batch_tasks().Open();
  ASSERT_TRUE(open.ok());
  for (const session::TaskRecord& t : *open) EXPECT_FALSE(t.batch_job.empty()) << t.task_id;
}

// A poller died after creating a job and before recording it: its successor finds the job by the
// group's name and records it, instead of creating (and paying for) it a second time.
TEST_F(BatchPollerTest, AJobCreatedButNotRecordedIsFoundNotCreatedAgain) {
  const std::string id = CreateTask("a fox");
  clock_.Advance(options_.window);
  auto grouped = store_->batch_tasks().Group(gemini::kDefaultModel, "imgmcp-lost", 100, 0);
  ASSERT_TRUE(grouped.ok() && grouped->size() == 1u);
  auto body = work_->RequestBody(grouped->front());
  ASSERT_TRUE(body.ok());
  auto created = client_->Submit(gemini::kDefaultModel, "imgmcp-lost", {{id, *body}}, {});
  ASSERT_TRUE(created.ok()) << created.error().message;

  BatchPoller successor = MakePoller(*store_);
  ASSERT_TRUE(successor.RunOnce({}).ok());
  EXPECT_EQ(Logged("batches.create"), 1u) << "not created again";
  EXPECT_EQ(Logged("batches.list"), 1u);
  auto open = store_->batch_tasks().Open();
  ASSERT_TRUE(open.ok() && open->size() == 1u);
  EXPECT_EQ(open->front().batch_job, created->name);
  // A successor reads the job at its first round after that (its schedule starts afresh).
  ASSERT_TRUE(successor.RunOnce({}).ok());
  EXPECT_EQ(Logged("batches.get"), 1u);
}

TEST_F(BatchPollerTest, AJobThatExpiresFailsItsTasksSayingSo) {
  ASSERT_TRUE(server_.Configure(Json::parse(R"({"batch_states": ["pending", "expired"]})")).ok());
  const std::string id = CreateTask("a fox");
  clock_.Advance(options_.window);
  BatchPoller poller = MakePoller(*store_);
  ASSERT_TRUE(poller.RunOnce({}).ok());
  clock_.Advance(std::chrono::duration_cast<milliseconds>(options_.first_poll * 1.1));
  ASSERT_TRUE(poller.RunOnce({}).ok());
  ASSERT_EQ(work_->errors.count(id), 1u);
  EXPECT_NE(work_->errors.at(id).find("ended expired"), std::string::npos) << work_->errors.at(id);
  EXPECT_NE(work_->errors.at(id).find("nothing was committed"), std::string::npos);
  EXPECT_EQ(Status(id), session::TaskStatus::kFailed);
}

// Every task of a submitted job cancelled: the job is cancelled upstream, once, and not read
// again; a job with one task left goes on.
TEST_F(BatchPollerTest, AJobWhoseEveryTaskWasCancelledIsCancelledUpstream) {
  const std::vector<std::string> ids = {CreateTask("a fox"), CreateTask("a whale")};
  clock_.Advance(options_.window);
  BatchPoller poller = MakePoller(*store_);
  ASSERT_TRUE(poller.RunOnce({}).ok());
  ASSERT_EQ(Logged("batches.create"), 1u);
  auto cancel = [this](const std::string& id) {
    session::TaskUpdate update;
    update.task_id = id;
    update.owner = "o";
    update.status = session::TaskStatus::kCancelled;
    update.unless_committed = true;
    ASSERT_TRUE(store_->UpdateTask(update).ok());
  };
  cancel(ids[0]);
  ASSERT_TRUE(poller.RunOnce({}).ok());
  EXPECT_EQ(Logged("batches.cancel"), 0u) << "one task of the job is still wanted";
  cancel(ids[1]);
  ASSERT_TRUE(poller.RunOnce({}).ok());
  EXPECT_EQ(Logged("batches.cancel"), 1u);
  clock_.Advance(seconds(3600));
  ASSERT_TRUE(poller.RunOnce({}).ok());
  EXPECT_EQ(Logged("batches.cancel"), 1u);
  EXPECT_EQ(Logged("batches.get"), 0u) << "a cancelled job is not followed";
  const Json jobs = server_.Batches();
  ASSERT_EQ(jobs.size(), 1u) << jobs.dump();
  EXPECT_EQ(jobs[0]["state"], "cancelled") << jobs.dump();
}

TEST_F(BatchPollerTest, OnlyTheHolderOfThePollLockPolls) {
  CreateTask("a fox");
  clock_.Advance(options_.window);
  auto other_store = Open();  // another process on the same data directory
  ASSERT_NE(other_store, nullptr);
  BatchPoller first = MakePoller(*store_);
  BatchPoller second = MakePoller(*other_store);
  ASSERT_TRUE(first.RunOnce({}).ok());
  ASSERT_TRUE(second.RunOnce({}).ok());
  EXPECT_TRUE(first.leading());
  EXPECT_FALSE(second.leading());
  EXPECT_EQ(Logged("batches.create"), 1u);
}

}  // namespace
}  // namespace imgmcp::app
