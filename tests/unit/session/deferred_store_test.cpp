// DeferredSessionStore: methods wait for the background open, turns keep arrival order across the
// open, open errors reach every call; CheckDataDirUsable's start-up checks.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>

#include "session/deferred_session_store.h"
#include "session/sqlite/sqlite_session_store.h"
#include "test_util.h"

namespace imgmcp::session {
namespace {

using testing::FakeClock;
using testing::MakeVersion;
using testing::TempDir;

using testing::kWait;
// How long a call is given to (wrongly) finish while the open is held back. Only ever waited
// for in full when the code is right, so it cannot make a correct build flaky.
constexpr auto kStillBlocked = std::chrono::milliseconds(100);

// An opener held back until the test releases it.
class GatedOpener {
 public:
  explicit GatedOpener(StoreOptions options) : options_(std::move(options)) {}
  DeferredSessionStore::Opener Opener() {
    return [this]() -> Result<std::unique_ptr<SessionStore>> {
      gate_.get_future().wait();
      if (fail_) return MakeError(ErrorCode::kFailedPrecondition, "disk on fire");
      return sqlite::OpenSessionStore(options_, clock_);
    };
  }
  void Release(bool fail = false) {
    fail_ = fail;
    gate_.set_value();
  }

 private:
  StoreOptions options_;
  FakeClock clock_;
  std::promise<void> gate_;
  bool fail_ = false;  // written before set_value, read after the future is ready
};

class DeferredStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { options_.data_dir = tmp_.path() / "data"; }

  // Commits one version with `prompt` to `session` through a plain (non-deferred) store.
  void Precommit(const std::string& session, const std::string& prompt) {
    auto store = sqlite::OpenSessionStore(options_, clock_);
    ASSERT_TRUE(store.ok()) << store.error().message;
    auto turn = (*store)->AcquireTurn(session, {});
    ASSERT_TRUE(turn.ok());
    ASSERT_TRUE((*turn)->Commit(MakeVersion("bytes-" + prompt, {}, prompt)).ok());
  }

  std::vector<std::string> Prompts(SessionStore& store, const std::string& session) {
    std::vector<std::string> prompts;
    auto history = store.History(session);
    EXPECT_TRUE(history.ok());
    if (history.ok()) {
      for (const auto& v : *history) prompts.push_back(v.prompt);
    }
    return prompts;
  }

  TempDir tmp_;
  FakeClock clock_;
  StoreOptions options_;
};

TEST_F(DeferredStoreTest, ReadsWaitForTheOpenAndSeeTheStoredState) {
  ASSERT_NO_FATAL_FAILURE(Precommit("old", "from an earlier run"));
  GatedOpener opener(options_);
  DeferredSessionStore store(opener.Opener());
  EXPECT_FALSE(store.OpenFinished());

  auto version = std::async(std::launch::async, [&] { return store.GetVersion("old", {}); });
  auto exists = std::async(std::launch::async, [&] { return store.SessionExists("old"); });
  EXPECT_EQ(version.wait_for(kStillBlocked), std::future_status::timeout);
  EXPECT_FALSE(store.OpenFinished());

  opener.Release();
  ASSERT_EQ(version.wait_for(kWait), std::future_status::ready);
  auto v = version.get();
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->version, 1);
  EXPECT_EQ(v->prompt, "from an earlier run");
  EXPECT_TRUE(exists.get());
  EXPECT_TRUE(store.OpenFinished());
  EXPECT_TRUE(store.WaitUntilOpen().ok());
}

// Tasks wait for the open like every other call, then reach the real store (which keeps them:
// the interface's default answers kUnsupported).
TEST_F(DeferredStoreTest, TasksWaitForTheOpenAndReachTheRealStore) {
  GatedOpener opener(options_);
  DeferredSessionStore store(opener.Opener());
  NewTask task;
  task.owner = "o";
  task.session_id = "s";
  task.tool = "edit_image";
  auto created = std::async(std::launch::async, [&] { return store.CreateTask(task); });
  EXPECT_EQ(created.wait_for(kStillBlocked), std::future_status::timeout);
  opener.Release();
  ASSERT_EQ(created.wait_for(kWait), std::future_status::ready);
  Result<TaskRecord> t = created.get();
  ASSERT_TRUE(t.ok()) << t.error().message;
  Result<std::optional<TaskRecord>> got = store.GetTask(t->task_id, "o");
  ASSERT_TRUE(got.ok() && got->has_value());
  TaskUpdate cancel;
  cancel.task_id = t->task_id;
  cancel.owner = "o";
  cancel.status = TaskStatus::kCancelled;
  Result<TaskRecord> cancelled = store.UpdateTask(cancel);
  ASSERT_TRUE(cancelled.ok()) << cancelled.error().message;
  EXPECT_EQ(cancelled->status, TaskStatus::kCancelled);
  Result<TaskPage> page = store.ListTasks("o", std::nullopt, 0);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->tasks.size(), 1u);
  EXPECT_EQ(page->tasks[0].status, TaskStatus::kCancelled);
  EXPECT_TRUE(store.SweepTasks().ok());
}

TEST_F(DeferredStoreTest, ReservationsBeforeTheOpenKeepArrivalOrder) {
  GatedOpener opener(options_);
  DeferredSessionStore store(opener.Opener());

  // Drawn on the "reading thread" while the store is still opening: must not block.
  auto first = store.ReserveTurn("s");
  auto second = store.ReserveTurn("s");
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*first)->session_id(), "s");
  EXPECT_FALSE(store.OpenFinished());

  auto commit = [&store](std::unique_ptr<TurnReservation> reservation, std::string prompt) {
    auto turn = store.AcquireReservedTurn(std::move(reservation), {});
    if (!turn.ok()) return turn.error().message;
    auto v = (*turn)->Commit(MakeVersion("b-" + prompt, {}, prompt));
    return v.ok() ? std::string("ok") : v.error().message;
  };
  // Workers start in the "wrong" order: the later arrivals first, then an unreserved call.
  auto second_done = std::async(std::launch::async, commit, std::move(*second), "second");
  auto third_done = std::async(std::launch::async, [&] {
    auto turn = store.AcquireTurn("s", {});
    if (!turn.ok()) return turn.error().message;
    auto v = (*turn)->Commit(MakeVersion("b-third", {}, "third"));
    return v.ok() ? std::string("ok") : v.error().message;
  });
  EXPECT_EQ(second_done.wait_for(kStillBlocked), std::future_status::timeout);
  opener.Release();
  // The second arrival cannot run before the first one's turn.
  EXPECT_EQ(second_done.wait_for(kStillBlocked), std::future_status::timeout);
  auto first_done = std::async(std::launch::async, commit, std::move(*first), "first");

  ASSERT_EQ(first_done.wait_for(kWait), std::future_status::ready);
  ASSERT_EQ(second_done.wait_for(kWait), std::future_status::ready);
  ASSERT_EQ(third_done.wait_for(kWait), std::future_status::ready);
  EXPECT_EQ(first_done.get(), "ok");
  EXPECT_EQ(second_done.get(), "ok");
  EXPECT_EQ(third_done.get(), "ok");
  EXPECT_EQ(Prompts(store, "s"), (std::vector<std::string>{"first", "second", "third"}));
}

TEST_F(DeferredStoreTest, APlaceGivenUpBeforeTheOpenLeavesNoGhostInTheLine) {
  GatedOpener opener(options_);
  DeferredSessionStore store(opener.Opener());
  {
    auto abandoned = store.ReserveTurn("s");
    ASSERT_TRUE(abandoned.ok());
  }  // the call was cancelled before the store opened
  opener.Release();
  auto turn = std::async(std::launch::async, [&] { return store.AcquireTurn("s", {}).ok(); });
  ASSERT_EQ(turn.wait_for(kWait), std::future_status::ready);
  EXPECT_TRUE(turn.get());
}

TEST_F(DeferredStoreTest, ReservationsAfterTheOpenComeStraightFromTheRealStore) {
  GatedOpener opener(options_);
  DeferredSessionStore store(opener.Opener());
  opener.Release();
  ASSERT_TRUE(store.WaitUntilOpen().ok());
  auto reservation = store.ReserveTurn("s");
  ASSERT_TRUE(reservation.ok());
  auto turn = store.AcquireReservedTurn(std::move(*reservation), {});
  ASSERT_TRUE(turn.ok());
  EXPECT_TRUE((*turn)->Commit(MakeVersion("x")).ok());
}

TEST_F(DeferredStoreTest, InvalidSessionIdIsRefusedEvenBeforeTheOpen) {
  GatedOpener opener(options_);
  DeferredSessionStore store(opener.Opener());
  for (const char* bad : {"", "../x", "a/b", ".."}) {
    auto r = store.ReserveTurn(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  }
  opener.Release();
}

TEST_F(DeferredStoreTest, AnOpenErrorReachesEveryCall) {
  GatedOpener opener(options_);
  DeferredSessionStore store(opener.Opener());
  auto early = store.ReserveTurn("s");
  ASSERT_TRUE(early.ok());
  auto waiting = std::async(std::launch::async,
                            [&] { return store.AcquireReservedTurn(std::move(*early), {}); });
  opener.Release(/*fail=*/true);
  ASSERT_EQ(waiting.wait_for(kWait), std::future_status::ready);
  auto turn = waiting.get();
  ASSERT_FALSE(turn.ok());
  EXPECT_NE(turn.error().message.find("disk on fire"), std::string::npos);

  EXPECT_FALSE(store.WaitUntilOpen().ok());
  EXPECT_FALSE(store.ReserveTurn("s").ok());
  EXPECT_FALSE(store.AcquireTurn("s", {}).ok());
  EXPECT_FALSE(store.GetVersion("s", {}).ok());
  EXPECT_FALSE(store.History("s").ok());
  EXPECT_FALSE(store.ListSessions({}, 10).ok());
  EXPECT_TRUE(store.SessionExists("s"));  // so that callers go on to report the open error
  EXPECT_FALSE(store.SessionExists("../s"));
  auto read = store.ReadImage(VersionInfo{});
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, ErrorCode::kFailedPrecondition);
}

TEST_F(DeferredStoreTest, AThrowingOpenerBecomesAnError) {
  DeferredSessionStore store([]() -> Result<std::unique_ptr<SessionStore>> {
    throw std::runtime_error("sqlite exploded");
  });
  Status st = store.WaitUntilOpen();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("sqlite exploded"), std::string::npos);
}

TEST_F(DeferredStoreTest, TheRealStoreSeesEarlierSessions) {
  ASSERT_NO_FATAL_FAILURE(Precommit("kept", "p1"));
  DeferredSessionStore store([this] { return sqlite::OpenSessionStore(options_, clock_); });
  auto v = store.GetVersion("kept", {});
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->prompt, "p1");
}

// An opener that counts its calls and says when the first one began.
class CountingOpener {
 public:
  CountingOpener(const StoreOptions& options, const Clock& clock)
      : options_(options), clock_(clock) {}
  DeferredSessionStore::Opener Opener() {
    return [this]() -> Result<std::unique_ptr<SessionStore>> {
      if (calls_.fetch_add(1) == 0) began_.set_value();
      return sqlite::OpenSessionStore(options_, clock_);
    };
  }
  int calls() const { return calls_.load(); }
  // True once the open has begun, waiting at most `timeout` for it.
  bool Began(std::chrono::milliseconds timeout) {
    return began_future_.wait_for(timeout) == std::future_status::ready;
  }

 private:
  const StoreOptions& options_;
  const Clock& clock_;
  std::atomic<int> calls_{0};
  std::promise<void> began_;
  std::future<void> began_future_ = began_.get_future();
};

// OpenStart::kWhenNeeded: nothing runs until StartOpening() or a call that needs the store; then
// the open runs once.
TEST_F(DeferredStoreTest, AnOpenWhenNeededBeginsAtStartOpeningOnce) {
  ASSERT_NO_FATAL_FAILURE(Precommit("kept", "p1"));
  CountingOpener opener(options_, clock_);
  DeferredSessionStore store(opener.Opener(), DeferredSessionStore::OpenStart::kWhenNeeded);
  store.SetChangeListener([](const StoreChange&) {});  // wiring needs no store
  EXPECT_FALSE(opener.Began(kStillBlocked)) << "the open began before anything asked for it";
  EXPECT_FALSE(store.OpenFinished());
  store.StartOpening();
  store.StartOpening();
  ASSERT_TRUE(store.WaitForOpen(kWait).ok());
  EXPECT_EQ(opener.calls(), 1);
  auto v = store.GetVersion("kept", {});
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->prompt, "p1");
}

TEST_F(DeferredStoreTest, AnOpenWhenNeededBeginsAtTheFirstCallThatWaitsForIt) {
  ASSERT_NO_FATAL_FAILURE(Precommit("kept", "p1"));
  CountingOpener opener(options_, clock_);
  DeferredSessionStore store(opener.Opener(), DeferredSessionStore::OpenStart::kWhenNeeded);
  auto v = store.GetVersion("kept", {});  // would wait for ever if it did not begin the open
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->prompt, "p1");
  EXPECT_EQ(opener.calls(), 1);
}

TEST_F(DeferredStoreTest, AnOpenWhenNeededBeginsAtTheFirstReservation) {
  CountingOpener opener(options_, clock_);
  DeferredSessionStore store(opener.Opener(), DeferredSessionStore::OpenStart::kWhenNeeded);
  auto reservation = store.ReserveTurn("s");  // never blocks, and begins the open
  ASSERT_TRUE(reservation.ok());
  ASSERT_TRUE(opener.Began(kWait));
  auto turn = store.AcquireReservedTurn(std::move(*reservation), {});
  ASSERT_TRUE(turn.ok()) << turn.error().message;
  EXPECT_TRUE((*turn)->Commit(MakeVersion("x")).ok());
  EXPECT_EQ(opener.calls(), 1);
}

// An open that fails with kUnavailable (a database not up yet) is retried: calls meanwhile fail at
// once with that error, saying so, and work once an attempt succeeds. Other failures are final.
TEST_F(DeferredStoreTest, AnUnavailableStoreIsRetriedAndCallsSayWhyMeanwhile) {
  std::mutex mu;  // guards reachable and attempts
  std::condition_variable_any attempted;
  bool reachable = false;
  int attempts = 0;
  DeferredSessionStore store([&]() -> Result<std::unique_ptr<SessionStore>> {
    std::lock_guard lock(mu);
    ++attempts;
    attempted.notify_all();
    if (!reachable) return Error(ErrorCode::kUnavailable, "connection refused");
    return sqlite::OpenSessionStore(options_, clock_);
  });
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(attempted.wait_for(lock, kWait, [&] { return attempts >= 2; }));
  }
  auto early = store.GetVersion("s", {});
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(early.error().message.find("connection refused"), std::string::npos);
  EXPECT_NE(early.error().message.find("retrying"), std::string::npos) << early.error().message;
  EXPECT_FALSE(store.AcquireTurn("s", {}).ok());  // no wait, no turn
  NewTask task;
  task.tool = "edit_image";
  auto no_task = store.CreateTask(task);
  ASSERT_FALSE(no_task.ok());
  EXPECT_EQ(no_task.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(store.SweepTasks().error().code, ErrorCode::kUnavailable);
  {
    std::lock_guard lock(mu);
    reachable = true;
  }
  ASSERT_TRUE(store.WaitForOpen(kWait).ok());
  auto turn = store.AcquireTurn("s", {});
  ASSERT_TRUE(turn.ok()) << turn.error().message;
  ASSERT_TRUE((*turn)->Commit(MakeVersion("after")).ok());
}

TEST_F(DeferredStoreTest, AFinalOpenErrorIsNotRetried) {
  std::atomic<int> attempts{0};
  DeferredSessionStore store([&]() -> Result<std::unique_ptr<SessionStore>> {
    ++attempts;
    return Error(ErrorCode::kPermissionDenied, "password authentication failed");
  });
  Status st = store.WaitUntilOpen();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kPermissionDenied);
  EXPECT_TRUE(store.OpenFinished());
  EXPECT_EQ(attempts.load(), 1);
}

TEST_F(DeferredStoreTest, DestroyingAStoreThatIsRetryingReturnsAtOnce) {
  std::promise<void> tried;
  std::atomic<bool> told{false};
  auto store =
      std::make_unique<DeferredSessionStore>([&]() -> Result<std::unique_ptr<SessionStore>> {
        if (!told.exchange(true)) tried.set_value();
        return Error(ErrorCode::kUnavailable, "connection refused");
      });
  ASSERT_EQ(tried.get_future().wait_for(kWait), std::future_status::ready);
  store.reset();  // ends the pause between attempts; a hang here fails the test's timeout
}

// --- CheckDataDirUsable -------------------------------------------------------------------------

TEST_F(DeferredStoreTest, CheckCreatesThePrivateLayoutAndLeavesNoProbeBehind) {
  ::umask(0);
  Status st = CheckDataDirUsable(options_.data_dir);
  ::umask(022);
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(testing::ModeOf(options_.data_dir), 0700);
  EXPECT_EQ(testing::ModeOf(options_.data_dir / "images"), 0700);
  EXPECT_EQ(testing::ModeOf(options_.data_dir / "locks"), 0700);
  int entries = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(options_.data_dir)) {
    EXPECT_TRUE(e.is_directory()) << e.path();
    ++entries;
  }
  EXPECT_EQ(entries, 2);  // images/ and locks/, nothing else
}

TEST_F(DeferredStoreTest, CheckRefusesADirUnderARegularFile) {
  std::ofstream(tmp_.path() / "file.txt") << "x";
  Status st = CheckDataDirUsable(tmp_.path() / "file.txt" / "sub");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("file.txt"), std::string::npos) << st.error().message;
  EXPECT_NE(st.error().message.find("not a directory"), std::string::npos) << st.error().message;
}

TEST_F(DeferredStoreTest, CheckRefusesWhenLockFilesCannotBeCreated) {
  std::filesystem::create_directories(options_.data_dir);
  std::ofstream(options_.data_dir / "locks") << "not a directory";
  Status st = CheckDataDirUsable(options_.data_dir);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("locks"), std::string::npos) << st.error().message;
}

TEST_F(DeferredStoreTest, CheckRefusesADatabasePathThatIsNotAFile) {
  std::filesystem::create_directories(options_.data_dir / "imgmcp.db");
  Status st = CheckDataDirUsable(options_.data_dir);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("imgmcp.db"), std::string::npos) << st.error().message;
}

TEST_F(DeferredStoreTest, CheckRefusesAnUnwritableFileSystem) {
  // /proc refuses new entries even to root (tests run as root in CI, which ignores modes).
  Status st = CheckDataDirUsable("/proc/imgmcp-test-data");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("/proc/imgmcp-test-data"), std::string::npos)
      << st.error().message;
}

}  // namespace
}  // namespace imgmcp::session

namespace imgmcp::session {
namespace {

// A store that only remembers its change and task listeners (every other call is unavailable).
class ListenerOnlyStore final : public SessionStore {
 public:
  explicit ListenerOnlyStore(ChangeListener* seen, TaskListener* seen_tasks = nullptr)
      : seen_(seen), seen_tasks_(seen_tasks) {}
  void SetChangeListener(ChangeListener listener) override { *seen_ = std::move(listener); }
  void SetTaskListener(TaskListener listener) override {
    if (seen_tasks_ != nullptr) *seen_tasks_ = std::move(listener);
  }
  Result<std::unique_ptr<TurnReservation>> ReserveTurn(const std::string&) override {
    return Nope();
  }
  Result<std::unique_ptr<EditTurn>> AcquireReservedTurn(std::unique_ptr<TurnReservation>,
                                                        const TurnOptions&) override {
    return Nope();
  }
  Result<std::unique_ptr<EditTurn>> AcquireTurn(const std::string&, const TurnOptions&) override {
    return Nope();
  }
  Result<VersionInfo> GetVersion(const std::string&, std::optional<int64_t>) override {
    return Nope();
  }
  Result<std::string> ReadImage(const VersionInfo&) override { return Nope(); }
  Result<SessionSnapshot> ReadSession(const std::string&, std::optional<int64_t>, bool) override {
    return Nope();
  }
  Result<SessionPage> ListSessions(const std::string&, const std::optional<std::string>&,
                                   int) override {
    return Nope();
  }
  bool SessionExists(const std::string&) override { return false; }
  Result<std::optional<AppliedKey>> FindAppliedKey(const std::string&,
                                                   const std::string&) override {
    return Nope();
  }

 private:
  static Error Nope() { return MakeError(ErrorCode::kUnavailable, "not this store"); }
  ChangeListener* seen_;
  TaskListener* seen_tasks_;
};

// The tools set their listener at start-up, while the store may still be opening: it reaches the
// real store once it is open, and a later one replaces it there.
TEST(DeferredStoreListenerTest, AChangeListenerReachesTheStoreOnceOpen) {
  std::promise<void> gate;
  ChangeListener seen;
  DeferredSessionStore store([&]() -> Result<std::unique_ptr<SessionStore>> {
    gate.get_future().wait();
    return std::unique_ptr<SessionStore>(new ListenerOnlyStore(&seen));
  });
  int calls = 0;
  store.SetChangeListener([&](const StoreChange&) { ++calls; });
  gate.set_value();
  ASSERT_TRUE(store.WaitUntilOpen().ok());
  ASSERT_TRUE(seen);
  seen(StoreChange{"s", 1, true});
  EXPECT_EQ(calls, 1);
  store.SetChangeListener(nullptr);
  EXPECT_FALSE(seen);
}

TEST(DeferredStoreListenerTest, ATaskListenerReachesTheStoreOnceOpen) {
  std::promise<void> gate;
  ChangeListener seen;
  TaskListener seen_tasks;
  DeferredSessionStore store([&]() -> Result<std::unique_ptr<SessionStore>> {
    gate.get_future().wait();
    return std::unique_ptr<SessionStore>(new ListenerOnlyStore(&seen, &seen_tasks));
  });
  int calls = 0;
  store.SetTaskListener([&](const TaskChange&) { ++calls; });
  gate.set_value();
  ASSERT_TRUE(store.WaitUntilOpen().ok());
  ASSERT_TRUE(seen_tasks);
  seen_tasks(
      TaskChange{.task_id = "0123456789abcdef0123456789abcdef", .status = TaskStatus::kCompleted});
  EXPECT_EQ(calls, 1);
  store.SetTaskListener(nullptr);
  EXPECT_FALSE(seen_tasks);
}

}  // namespace
}  // namespace imgmcp::session
