// The typed SessionStore suite, tasks (session_store.h "Tasks"): rows that round-trip and survive a
// restart, unguessable ids, owners that never see each other's tasks, the terminal rule, listing
// pages, expiry that never touches a version, and tasks whose runner (another store on the same
// data: another process or replica) stopped — failed, or completed from the version its key
// committed; and batch tasks (batch_tasks.h), which no runner's death settles, grouped once each
// after their window. The races of two terminal updates and of two pollers grouping are in
// store_contract_concurrency_test.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "session/chain_store.h"
#include "session/idempotency.h"
#include "store_backings.h"
#include "test_util.h"

namespace imgmcp::session {
namespace {

using testing::FakeClock;
using testing::MakeVersion;

constexpr auto kSettleWait = std::chrono::seconds(20);  // a dead runner is seen within seconds

template <typename Backing>
class StoreTaskTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  std::unique_ptr<SessionStore> Open() {
    Result<std::unique_ptr<SessionStore>> opened = backing_.Open(options_, clock_);
    EXPECT_TRUE(opened.ok()) << opened.error().message;
    return opened.ok() ? std::move(*opened) : nullptr;
  }
  void Reopen() {
    store_.reset();
    store_ = Open();
    ASSERT_NE(store_, nullptr);
  }

  TaskRecord Create(const std::string& owner = "owner-a", const std::string& session = "s",
                    int64_t ttl_ms = 60'000) {
    NewTask task;
    task.owner = owner;
    task.session_id = session;
    task.tool = "edit_image";
    task.request_json = R"({"name":"edit_image","arguments":{"prompt":"p"}})";
    task.ttl_ms = ttl_ms;
    task.poll_interval_ms = 500;
    task.status_message = "queued";
    Result<TaskRecord> created = store_->CreateTask(task);
    EXPECT_TRUE(created.ok()) << created.error().message;
    return created.ok() ? *created : TaskRecord{};
  }

  TaskRecord CreateBatch(const std::string& model, const std::string& owner = "owner-a") {
    NewTask task;
    task.owner = owner;
    task.tool = "generate_image";
    task.request_json = R"({"name":"generate_image","arguments":{"prompt":"p"}})";
    task.ttl_ms = 60'000;
    task.status_message = "waiting for the batch window";
    task.batch_model = model;
    Result<TaskRecord> created = store_->CreateTask(task);
    EXPECT_TRUE(created.ok()) << created.error().message;
    return created.ok() ? *created : TaskRecord{};
  }

  // The batch rows of `store` (every store here is a ChainStore).
  static BatchTasks Batch(SessionStore& store) {
    return dynamic_cast<ChainStore&>(store).batch_tasks();
  }

  static std::vector<std::string> Ids(const std::vector<TaskRecord>& tasks) {
    std::vector<std::string> out;
    for (const TaskRecord& t : tasks) out.push_back(t.task_id);
    return out;
  }

  std::optional<TaskRecord> Get(SessionStore& store, const std::string& id,
                                const std::string& owner = "owner-a") {
    Result<std::optional<TaskRecord>> got = store.GetTask(id, owner);
    EXPECT_TRUE(got.ok()) << got.error().message;
    return got.ok() ? *got : std::nullopt;
  }

  // GetTask through `store` until the task is terminal (a replica's lock is dropped by the
  // server a moment after its connection closes) or kSettleWait passes.
  std::optional<TaskRecord> WaitSettled(SessionStore& store, const std::string& id) {
    const auto deadline = std::chrono::steady_clock::now() + kSettleWait;
    while (true) {
      std::optional<TaskRecord> task = Get(store, id);
      if (!task.has_value() || IsTerminal(task->status) ||
          std::chrono::steady_clock::now() > deadline) {
        return task;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polls a condition
    }
  }

  Result<TaskRecord> Update(const std::string& id, TaskStatus status,
                            const std::string& owner = "owner-a") {
    TaskUpdate update;
    update.task_id = id;
    update.owner = owner;
    update.status = status;
    if (status == TaskStatus::kCompleted) update.result_json = R"({"content":[]})";
    if (status == TaskStatus::kFailed) update.error_json = R"({"code":-32603,"message":"x"})";
    return store_->UpdateTask(update);
  }

  Backing backing_;  // destroyed after the stores below
  FakeClock clock_;
  StoreOptions options_;
  std::unique_ptr<SessionStore> store_;
};

TYPED_TEST_SUITE(StoreTaskTest, testing::Backings, testing::BackingNames);

TYPED_TEST(StoreTaskTest, ATaskRoundTripsWithEveryFieldAndSurvivesARestart) {
  const TaskRecord created = this->Create();
  EXPECT_TRUE(IsValidTaskId(created.task_id));
  EXPECT_EQ(created.status, TaskStatus::kWorking);
  EXPECT_FALSE(created.runner.empty());
  EXPECT_EQ(created.created_at, "2027-01-15T08:00:00.000Z");
  EXPECT_EQ(created.updated_at, created.created_at);
  for (int restart = 0; restart < 2; ++restart) {
    std::optional<TaskRecord> got = this->Get(*this->store_, created.task_id);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->task_id, created.task_id);
    EXPECT_EQ(got->owner, "owner-a");
    EXPECT_EQ(got->session_id, "s");
    EXPECT_EQ(got->tool, "edit_image");
    EXPECT_EQ(got->request_json, created.request_json);
    EXPECT_EQ(got->status_message, restart == 0 ? "queued" : "done");
    EXPECT_EQ(got->ttl_ms, 60'000);
    EXPECT_EQ(got->poll_interval_ms, 500);
    EXPECT_EQ(got->created_at, created.created_at);
    EXPECT_EQ(got->runner, created.runner);
    if (restart == 0) {
      this->clock_.Advance(std::chrono::milliseconds(1500));
      TaskUpdate done{created.task_id,
                      "owner-a",
                      TaskStatus::kCompleted,
                      "done",
                      R"({"content":[{"type":"text","text":"ok"}]})",
                      7,
                      std::nullopt};
      ASSERT_TRUE(this->store_->UpdateTask(done).ok());
      this->Reopen();  // a completed task is durable
    }
  }
  std::optional<TaskRecord> got = this->Get(*this->store_, created.task_id);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status, TaskStatus::kCompleted);
  EXPECT_EQ(got->status_message, "done");
  EXPECT_EQ(got->result_json, R"({"content":[{"type":"text","text":"ok"}]})");
  EXPECT_EQ(got->version, 7);
  EXPECT_EQ(got->error_json, "");
  EXPECT_EQ(got->updated_at, "2027-01-15T08:00:01.500Z");
}

TYPED_TEST(StoreTaskTest, IdsAre128RandomBitsAndNeverRepeat) {
  std::set<std::string> ids;
  for (int i = 0; i < 64; ++i) {
    const TaskRecord t = this->Create();
    EXPECT_EQ(t.task_id.size(), 32u);
    EXPECT_TRUE(IsValidTaskId(t.task_id)) << t.task_id;
    ids.insert(t.task_id);
  }
  EXPECT_EQ(ids.size(), 64u);
  EXPECT_FALSE(this->Get(*this->store_, "0123456789abcdef0123456789abcdef").has_value());
  EXPECT_FALSE(this->Get(*this->store_, "not a task id").has_value());
}

TYPED_TEST(StoreTaskTest, AnotherOwnersTaskIsIndistinguishableFromAnUnknownOne) {
  const TaskRecord mine = this->Create("owner-a");
  const TaskRecord anonymous = this->Create("");
  EXPECT_FALSE(this->Get(*this->store_, mine.task_id, "owner-b").has_value());
  EXPECT_FALSE(this->Get(*this->store_, mine.task_id, "").has_value());
  EXPECT_FALSE(this->Get(*this->store_, anonymous.task_id, "owner-a").has_value());
  EXPECT_TRUE(this->Get(*this->store_, anonymous.task_id, "").has_value());

  Result<TaskRecord> theirs = this->Update(mine.task_id, TaskStatus::kCancelled, "owner-b");
  ASSERT_FALSE(theirs.ok());
  EXPECT_EQ(theirs.error().code, ErrorCode::kNotFound);
  Result<TaskRecord> unknown =
      this->Update("0123456789abcdef0123456789abcdef", TaskStatus::kCancelled, "owner-b");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(this->Get(*this->store_, mine.task_id)->status, TaskStatus::kWorking);

  Result<TaskPage> b = this->store_->ListTasks("owner-b", std::nullopt, 0);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_TRUE(b->tasks.empty());
  Result<TaskPage> a = this->store_->ListTasks("owner-a", std::nullopt, 0);
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->tasks.size(), 1u);
  EXPECT_EQ(a->tasks[0].task_id, mine.task_id);
}

TYPED_TEST(StoreTaskTest, OnlyATaskThatIsNotTerminalChanges) {
  const TaskRecord t = this->Create();
  Result<TaskRecord> asked = this->Update(t.task_id, TaskStatus::kInputRequired);
  ASSERT_TRUE(asked.ok()) << asked.error().message;
  EXPECT_EQ(asked->status, TaskStatus::kInputRequired);
  ASSERT_TRUE(this->Update(t.task_id, TaskStatus::kWorking).ok());
  ASSERT_TRUE(this->Update(t.task_id, TaskStatus::kFailed).ok());
  for (TaskStatus next : {TaskStatus::kWorking, TaskStatus::kCompleted, TaskStatus::kCancelled,
                          TaskStatus::kFailed}) {
    Result<TaskRecord> again = this->Update(t.task_id, next);
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().code, ErrorCode::kFailedPrecondition);
    EXPECT_NE(again.error().message.find("failed"), std::string::npos) << again.error().message;
  }
  std::optional<TaskRecord> got = this->Get(*this->store_, t.task_id);
  EXPECT_EQ(got->status, TaskStatus::kFailed);
  EXPECT_EQ(got->error_json, R"({"code":-32603,"message":"x"})");

  const TaskRecord c = this->Create();
  Result<TaskRecord> cancelled = this->Update(c.task_id, TaskStatus::kCancelled);
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled->status, TaskStatus::kCancelled);
  EXPECT_EQ(this->Update(c.task_id, TaskStatus::kCompleted).error().code,
            ErrorCode::kFailedPrecondition);
}

TYPED_TEST(StoreTaskTest, UpdatesThatMakeNoSenseAreRefusedAndChangeNothing) {
  const TaskRecord t = this->Create();
  TaskUpdate base;
  base.task_id = t.task_id;
  base.owner = "owner-a";
  std::vector<TaskUpdate> bad(4, base);
  bad[0].status = TaskStatus::kCompleted;  // no result
  bad[1].status = TaskStatus::kFailed;     // no error
  bad[2].status = TaskStatus::kCancelled;
  bad[2].result_json = "{}";
  bad[3].status = TaskStatus::kWorking;
  bad[3].error_json = "{}";
  for (const TaskUpdate& u : bad) {
    Result<TaskRecord> r = this->store_->UpdateTask(u);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(this->Get(*this->store_, t.task_id)->status, TaskStatus::kWorking);
  NewTask bad_session;
  bad_session.session_id = "../etc";
  bad_session.tool = "edit_image";
  EXPECT_EQ(this->store_->CreateTask(bad_session).error().code, ErrorCode::kInvalidArgument);
  NewTask bad_ttl;
  bad_ttl.tool = "edit_image";
  bad_ttl.ttl_ms = -1;
  EXPECT_EQ(this->store_->CreateTask(bad_ttl).error().code, ErrorCode::kInvalidArgument);
}

TYPED_TEST(StoreTaskTest, ListingPagesNewestFirst) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(this->Create().task_id);
    this->clock_.Advance(std::chrono::milliseconds(10));
  }
  this->Create("owner-b");
  std::vector<std::string> seen;
  std::optional<std::string> cursor;
  int pages = 0;
  do {
    Result<TaskPage> page = this->store_->ListTasks("owner-a", cursor, 2);
    ASSERT_TRUE(page.ok()) << page.error().message;
    EXPECT_LE(page->tasks.size(), 2u);
    for (const TaskRecord& t : page->tasks) seen.push_back(t.task_id);
    cursor = page->next_cursor;
    ++pages;
  } while (cursor.has_value() && pages < 10);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(seen, std::vector<std::string>(ids.rbegin(), ids.rend()));
  for (const std::string& bad : {std::string("nope"), std::string("dDE6eDp5"), std::string("")}) {
    Result<TaskPage> page = this->store_->ListTasks("owner-a", bad, 2);
    ASSERT_FALSE(page.ok()) << bad;
    EXPECT_EQ(page.error().code, ErrorCode::kInvalidArgument);
  }
}

TYPED_TEST(StoreTaskTest, AnExpiredTaskGoesButItsVersionStays) {
  const TaskRecord t = this->Create("owner-a", "s", 1000);
  const TaskRecord forever = this->Create("owner-a", "s", 0);
  const TaskRecord running = this->Create("owner-a", "s", 1000);
  auto turn = this->store_->AcquireTurn("s", {});
  ASSERT_TRUE(turn.ok());
  Result<VersionInfo> v = (*turn)->Commit(
      MakeVersion("bytes"), IdempotencyRecord{TaskIdempotencyKey(t.task_id), "digest"});
  ASSERT_TRUE(v.ok()) << v.error().message;
  turn->reset();
  TaskUpdate done{t.task_id,  "owner-a",   TaskStatus::kCompleted, std::nullopt, std::nullopt,
                  v->version, std::nullopt};
  ASSERT_TRUE(this->store_->UpdateTask(done).ok());
  ASSERT_TRUE(this->Update(forever.task_id, TaskStatus::kCancelled).ok());

  this->clock_.Advance(std::chrono::milliseconds(999));
  EXPECT_TRUE(this->Get(*this->store_, t.task_id).has_value());
  this->clock_.Advance(std::chrono::milliseconds(1));
  EXPECT_FALSE(this->Get(*this->store_, t.task_id).has_value());  // before any sweep
  Result<TaskPage> page = this->store_->ListTasks("owner-a", std::nullopt, 0);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->tasks.size(), 2u);
  this->clock_.Advance(std::chrono::hours(24 * 365));
  Result<int64_t> removed = this->store_->SweepTasks();
  ASSERT_TRUE(removed.ok()) << removed.error().message;
  EXPECT_EQ(*removed, 1);
  EXPECT_TRUE(this->Get(*this->store_, forever.task_id).has_value());  // ttl 0: kept
  EXPECT_TRUE(this->Get(*this->store_, running.task_id).has_value());  // not terminal: kept
  EXPECT_TRUE(this->store_->GetVersion("s", v->version).ok());
  Result<std::optional<AppliedKey>> key =
      this->store_->FindAppliedKey("s", TaskIdempotencyKey(t.task_id));
  ASSERT_TRUE(key.ok());
  EXPECT_TRUE(key->has_value());
}

TYPED_TEST(StoreTaskTest, ATaskWhoseRunnerStoppedFailsSayingNothingWasCommitted) {
  const TaskRecord t = this->Create();
  std::unique_ptr<SessionStore> other = this->Open();  // another process or replica
  ASSERT_NE(other, nullptr);
  std::optional<TaskRecord> alive = this->Get(*other, t.task_id);
  ASSERT_TRUE(alive.has_value());
  EXPECT_EQ(alive->status, TaskStatus::kWorking);  // its runner still lives
  ASSERT_TRUE(other->SweepTasks().ok());
  EXPECT_EQ(this->Get(*other, t.task_id)->status, TaskStatus::kWorking);

  this->store_.reset();  // the runner stops
  std::optional<TaskRecord> settled = this->WaitSettled(*other, t.task_id);
  ASSERT_TRUE(settled.has_value());
  EXPECT_EQ(settled->status, TaskStatus::kFailed);
  EXPECT_NE(settled->error_json.find("stopped before it finished"), std::string::npos)
      << settled->error_json;
  EXPECT_NE(settled->error_json.find("nothing was committed"), std::string::npos);
  EXPECT_NE(settled->error_json.find("\"code\""), std::string::npos);
  this->store_ = std::move(other);
  EXPECT_EQ(this->Update(t.task_id, TaskStatus::kCompleted).error().code,
            ErrorCode::kFailedPrecondition);
}

TYPED_TEST(StoreTaskTest, ATaskWhoseRunnerStoppedAfterCommittingIsCompletedFromTheVersion) {
  const TaskRecord t = this->Create();
  const TaskRecord other_session = this->Create("owner-a", "t");
  VersionInfo v;
  {
    auto turn = this->store_->AcquireTurn("s", {});
    ASSERT_TRUE(turn.ok());
    ASSERT_TRUE((*turn)->Commit(MakeVersion("first")).ok());
    Result<VersionInfo> committed = (*turn)->Commit(
        MakeVersion("second", 1), IdempotencyRecord{TaskIdempotencyKey(t.task_id), "digest"});
    ASSERT_TRUE(committed.ok()) << committed.error().message;
    v = *committed;
  }
  std::unique_ptr<SessionStore> other = this->Open();
  ASSERT_NE(other, nullptr);
  this->store_.reset();  // stops before recording the task's completion
  std::optional<TaskRecord> settled = this->WaitSettled(*other, t.task_id);
  ASSERT_TRUE(settled.has_value());
  EXPECT_EQ(settled->status, TaskStatus::kCompleted);
  EXPECT_EQ(settled->version, v.version);
  EXPECT_EQ(settled->result_json, "");    // rebuilt from the version by the layer above
  ASSERT_TRUE(other->SweepTasks().ok());  // the sweep settles the rest
  this->store_ = std::move(other);
  Result<TaskPage> page = this->store_->ListTasks("owner-a", std::nullopt, 0);
  ASSERT_TRUE(page.ok());
  for (const TaskRecord& task : page->tasks) {
    if (task.task_id == other_session.task_id) {
      EXPECT_EQ(task.status, TaskStatus::kFailed);
    }
  }
  EXPECT_EQ(this->store_->History("s")->size(), 2u);  // nothing committed twice
}

// A commit with the task's key claims its row in the same transaction: a cancel afterwards (one
// that must not undo a commit, unless_committed) is refused naming the version, and the task can
// still complete. A plain cancel of a task without a commit goes through as before.
TYPED_TEST(StoreTaskTest, ACommitClaimsItsTaskSoALaterCancelIsTooLate) {
  const TaskRecord t = this->Create();
  {
    auto turn = this->store_->AcquireTurn("s", {});
    ASSERT_TRUE(turn.ok());
    Result<VersionInfo> committed = (*turn)->Commit(
        MakeVersion("bytes"), IdempotencyRecord{TaskIdempotencyKey(t.task_id), "digest"});
    ASSERT_TRUE(committed.ok()) << committed.error().message;
  }
  std::optional<TaskRecord> claimed = this->Get(*this->store_, t.task_id);
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->status, TaskStatus::kWorking);
  EXPECT_EQ(claimed->version, 1);
  for (TaskStatus end : {TaskStatus::kCancelled, TaskStatus::kFailed}) {
    TaskUpdate stop{.task_id = t.task_id, .owner = "owner-a", .status = end};
    stop.unless_committed = true;
    if (end == TaskStatus::kFailed) stop.error_json = R"({"code":-32603,"message":"shut down"})";
    Result<TaskRecord> refused = this->store_->UpdateTask(stop);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, ErrorCode::kConflict);
    EXPECT_EQ(refused.error().message,
              "task " + t.task_id + " already committed version 1 and completes with it");
  }
  ASSERT_TRUE(this->Update(t.task_id, TaskStatus::kCompleted).ok());
  EXPECT_EQ(this->Get(*this->store_, t.task_id)->version, 1);
}

// A task ended before its commit (cancelled, or failed by a shutdown) makes the commit fail
// whole: no version, no key, no session row — and the task stays as it ended.
TYPED_TEST(StoreTaskTest, ACommitOfATaskThatEndedIsRefusedAndCommitsNothing) {
  for (TaskStatus end : {TaskStatus::kCancelled, TaskStatus::kFailed}) {
    const std::string session = end == TaskStatus::kCancelled ? "c" : "f";
    const TaskRecord t = this->Create("owner-a", session);
    TaskUpdate stop{.task_id = t.task_id, .owner = "owner-a", .status = end};
    stop.unless_committed = true;
    if (end == TaskStatus::kFailed) stop.error_json = R"({"code":-32603,"message":"shut down"})";
    ASSERT_TRUE(this->store_->UpdateTask(stop).ok());
    auto turn = this->store_->AcquireTurn(session, {});
    ASSERT_TRUE(turn.ok());
    Result<VersionInfo> commit = (*turn)->Commit(
        MakeVersion("bytes"), IdempotencyRecord{TaskIdempotencyKey(t.task_id), "digest"});
    ASSERT_FALSE(commit.ok());
    EXPECT_EQ(commit.error().code, ErrorCode::kCancelled);
    EXPECT_EQ(commit.error().message, "task " + t.task_id +
                                          " was cancelled or stopped before its commit; nothing "
                                          "was committed");
    EXPECT_EQ((*turn)->LastIssuedVersion(), 0);
    turn->reset();
    EXPECT_FALSE(this->store_->SessionExists(session));
    EXPECT_EQ(this->Get(*this->store_, t.task_id)->status, end);
    EXPECT_FALSE(this->Get(*this->store_, t.task_id)->version.has_value());
  }
  // A commit naming a task that has no row (never created, or gone) is refused the same way.
  auto turn = this->store_->AcquireTurn("n", {});
  ASSERT_TRUE(turn.ok());
  Result<VersionInfo> orphan = (*turn)->Commit(
      MakeVersion("bytes"),
      IdempotencyRecord{TaskIdempotencyKey("0123456789abcdef0123456789abcdef"), "d"});
  ASSERT_FALSE(orphan.ok());
  EXPECT_EQ(orphan.error().code, ErrorCode::kCancelled);
}

TYPED_TEST(StoreTaskTest, BatchTasksWaitForTheirWindowAndAreGroupedOnceOldestFirst) {
  constexpr int64_t kWindowMs = 10'000;
  std::vector<std::string> first;
  for (int i = 0; i < 3; ++i) {
    first.push_back(this->CreateBatch("model-a").task_id);
    this->clock_.Advance(std::chrono::milliseconds(1));
  }
  const TaskRecord other_model = this->CreateBatch("model-b");
  const TaskRecord immediate = this->Create();
  const TaskRecord created = *this->Get(*this->store_, first[0]);
  EXPECT_EQ(created.runner, kBatchRunner);
  EXPECT_EQ(created.batch_model, "model-a");
  EXPECT_EQ(created.batch_group, "");
  EXPECT_EQ(created.batch_job, "");
  EXPECT_EQ(this->Get(*this->store_, immediate.task_id)->batch_model, "");

  BatchTasks batch = this->Batch(*this->store_);
  auto early = batch.Group("model-a", "group-1", 100, kWindowMs);
  ASSERT_TRUE(early.ok()) << early.error().message;
  EXPECT_TRUE(early->empty()) << "the window has not passed";

  this->clock_.Advance(std::chrono::milliseconds(kWindowMs));
  auto grouped = batch.Group("model-a", "group-1", 100, kWindowMs);
  ASSERT_TRUE(grouped.ok()) << grouped.error().message;
  EXPECT_EQ(this->Ids(*grouped), first);
  for (const TaskRecord& t : *grouped) EXPECT_EQ(t.batch_group, "group-1");
  auto again = batch.Group("model-a", "group-2", 100, kWindowMs);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty()) << "a task is grouped once";

  auto recorded = batch.SetJob("group-1", "batches/job-1");
  ASSERT_TRUE(recorded.ok()) << recorded.error().message;
  EXPECT_EQ(*recorded, 3);
  EXPECT_EQ(*batch.SetJob("group-1", "batches/job-other"), 0) << "a job is recorded once";

  // The limit, and a cancelled task, which no group takes.
  std::vector<std::string> second;
  for (int i = 0; i < 3; ++i) second.push_back(this->CreateBatch("model-a").task_id);
  ASSERT_TRUE(this->Update(second[1], TaskStatus::kCancelled).ok());
  this->clock_.Advance(std::chrono::milliseconds(kWindowMs));
  auto limited = batch.Group("model-a", "group-3", 1, kWindowMs);
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(this->Ids(*limited).size(), 1u);
  auto rest = batch.Group("model-a", "group-4", 100, kWindowMs);
  ASSERT_TRUE(rest.ok());
  std::set<std::string> taken{this->Ids(*limited)[0]};
  for (const std::string& id : this->Ids(*rest)) taken.insert(id);
  EXPECT_EQ(taken, (std::set<std::string>{second[0], second[2]}));

  // Open: every batch task not terminal, with its group and job, across a restart.
  this->Reopen();
  auto open = this->Batch(*this->store_).Open();
  ASSERT_TRUE(open.ok()) << open.error().message;
  std::map<std::string, TaskRecord> by_id;
  for (const TaskRecord& t : *open) by_id[t.task_id] = t;
  EXPECT_EQ(by_id.size(), 6u);  // 3 + 2 of model-a (one cancelled) + 1 of model-b
  EXPECT_EQ(by_id.count(immediate.task_id), 0u);
  EXPECT_EQ(by_id.count(second[1]), 0u);
  EXPECT_EQ(by_id[first[2]].batch_job, "batches/job-1");
  EXPECT_EQ(by_id[other_model.task_id].batch_group, "");

  for (const char* bad : {"", "has space", "semi;colon"}) {
    EXPECT_EQ(batch.Group(bad, "g", 1, 0).error().code, ErrorCode::kInvalidArgument) << bad;
    EXPECT_EQ(batch.SetJob("g", bad).error().code, ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(batch.Group("model-a", "g", 0, 0).error().code, ErrorCode::kInvalidArgument);
  NewTask bad_model;
  bad_model.tool = "generate_image";
  bad_model.batch_model = "model a";
  EXPECT_EQ(this->store_->CreateTask(bad_model).error().code, ErrorCode::kInvalidArgument);
}

// A task that did not fit its group's job goes back to waiting (only while the group has no job),
// and the next Group takes it first.
TYPED_TEST(StoreTaskTest, ATaskUngroupedBeforeItsJobWaitsAgainAndIsGroupedNext) {
  const std::string a = this->CreateBatch("model-a").task_id;
  this->clock_.Advance(std::chrono::milliseconds(1));
  const std::string b = this->CreateBatch("model-a").task_id;
  BatchTasks batch = this->Batch(*this->store_);
  ASSERT_TRUE(batch.Group("model-a", "group-1", 10, 0).ok());
  auto ungrouped = batch.Ungroup("group-1", b);
  ASSERT_TRUE(ungrouped.ok()) << ungrouped.error().message;
  EXPECT_TRUE(*ungrouped);
  EXPECT_FALSE(*batch.Ungroup("group-2", a)) << "not a task of that group";
  EXPECT_EQ(*batch.SetJob("group-1", "batches/job-1"), 1);
  EXPECT_FALSE(*batch.Ungroup("group-1", a)) << "its group has a job now";
  EXPECT_EQ(this->Get(*this->store_, b)->batch_group, "");
  auto next = batch.Group("model-a", "group-2", 10, 0);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(this->Ids(*next), std::vector<std::string>{b});
  EXPECT_EQ(batch.Ungroup("group-2", "not-a-task").error().code, ErrorCode::kInvalidArgument);
}

// No process or replica runs a batch task: the one that created it may stop, and the task still
// waits for its job (the store's batch poller ends it).
TYPED_TEST(StoreTaskTest, ABatchTaskOutlivesTheProcessThatCreatedIt) {
  const TaskRecord t = this->CreateBatch("model-a");
  const TaskRecord immediate = this->Create();         // run by the same process or replica
  std::unique_ptr<SessionStore> other = this->Open();  // another process or replica
  ASSERT_NE(other, nullptr);
  this->store_.reset();  // the creator stops
  // Once its immediate task is settled, the creator is known to be gone...
  std::optional<TaskRecord> settled = this->WaitSettled(*other, immediate.task_id);
  ASSERT_TRUE(settled.has_value());
  ASSERT_EQ(settled->status, TaskStatus::kFailed);
  // ...and the batch task still waits, through reads and sweeps.
  ASSERT_TRUE(other->SweepTasks().ok());
  EXPECT_EQ(this->Get(*other, t.task_id)->status, TaskStatus::kWorking);
  auto open = this->Batch(*other).Open();
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(this->Ids(*open), std::vector<std::string>{t.task_id});
}

// One poller at a time across every store on the same data; when its holder goes (the lock
// object, with its flock or connection, is what a dead process leaves behind), another takes it.
TYPED_TEST(StoreTaskTest, OneStoreAtATimeHoldsTheBatchPollLock) {
  std::unique_ptr<SessionStore> other = this->Open();  // another process or replica
  ASSERT_NE(other, nullptr);
  auto lead = this->Batch(*this->store_).TryLead();
  ASSERT_TRUE(lead.ok()) << lead.error().message;
  ASSERT_NE(*lead, nullptr);
  EXPECT_TRUE((*lead)->Held());
  for (SessionStore* store : {other.get(), this->store_.get()}) {
    auto second = this->Batch(*store).TryLead();
    ASSERT_TRUE(second.ok()) << second.error().message;
    EXPECT_EQ(*second, nullptr) << "the lock is held";
  }
  lead->reset();  // the holder goes
  // PostgreSQL drops a closed connection's locks a moment after it closes: ask until it has.
  std::unique_ptr<BatchPollLock> successor;
  const auto deadline = std::chrono::steady_clock::now() + kSettleWait;
  while (successor == nullptr && std::chrono::steady_clock::now() < deadline) {
    auto taken = this->Batch(*other).TryLead();
    ASSERT_TRUE(taken.ok()) << taken.error().message;
    successor = std::move(*taken);
    if (successor == nullptr) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_NE(successor, nullptr) << "nobody could take the lock after its holder went";
  EXPECT_TRUE(successor->Held());
  EXPECT_EQ(*this->Batch(*this->store_).TryLead(), nullptr);
}

}  // namespace
}  // namespace imgmcp::session
