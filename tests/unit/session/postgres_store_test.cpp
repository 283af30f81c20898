// PostgresSessionStore's own behaviour, against the real server of pg_test_cluster.h (what every
// store does is in the typed suite): a replica whose connection dies gives its turn up and can
// no longer commit, commits reach the other replicas, equal bytes are stored once, the schema
// migrates once when replicas start together (and from schema v1), durable commits are asked for
// explicitly, corrupt bytes are data loss, local copies come back when deleted, an unreachable
// server is a clear error that does not leak the password, task rows reach the other replicas'
// task listeners, and a task whose replica dies mid-run is failed by the next reader, its turn
// released and its late commit refused.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "common/sha256.h"
#include "session/file_io.h"
#include "session/postgres/pg_schema.h"
#include "store_backings.h"
#include "test_util.h"

namespace imgmcp::session::postgres {
namespace {

using testing::FakeClock;
using testing::MakeVersion;
using testing::PostgresBacking;

constexpr auto kWait = std::chrono::seconds(30);

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenReplica();
    ASSERT_NE(store_, nullptr);
  }
  // Another store on the same database: another replica.
  std::unique_ptr<PostgresSessionStore> OpenReplica() {
    PostgresStoreOptions pg;
    pg.url = backing_.url();
    pg.pool_size = 4;
    StoreOptions options = options_;
    options.data_dir = dir_.path() / std::to_string(++replicas_);
    auto store = PostgresSessionStore::Open(options, pg, clock_);
    EXPECT_TRUE(store.ok()) << store.error().message;
    return store.ok() ? std::move(*store) : nullptr;
  }
  // A connection of the test's own, for looking at (and tampering with) the database.
  std::unique_ptr<PgConnection> Admin() {
    auto conn = PgConnection::Connect(backing_.url(), "test");
    EXPECT_TRUE(conn.ok()) << conn.error().message;
    return conn.ok() ? std::move(*conn) : nullptr;
  }
  int64_t Count(const std::string& sql) {
    auto conn = Admin();
    auto r = conn->Exec(sql, {}, "counting");
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? r->Int(0, 0) : -1;
  }
  VersionInfo CommitOne(SessionStore& store, const std::string& id, const std::string& bytes) {
    auto turn = store.AcquireTurn(id, {});
    EXPECT_TRUE(turn.ok()) << turn.error().message;
    if (!turn.ok()) return {};
    std::optional<int64_t> parent;
    if (auto cur = (*turn)->Current()) parent = cur->version;
    auto v = (*turn)->Commit(MakeVersion(bytes, parent));
    EXPECT_TRUE(v.ok()) << v.error().message;
    return v.ok() ? *v : VersionInfo{};
  }

  PostgresBacking backing_;
  testing::TempDir dir_;
  int replicas_ = 0;
  FakeClock clock_;
  StoreOptions options_;
  std::unique_ptr<PostgresSessionStore> store_;
};

// The replica holding a turn loses its connection (as when its process is killed): its place is
// released, the next edit in line (on another replica) goes on, and the old holder's commit is
// refused instead of landing on top of the next one's.
TEST_F(PostgresStoreTest, AReplicaThatLosesItsConnectionGivesUpItsTurn) {
  std::unique_ptr<PostgresSessionStore> doomed = OpenReplica();
  ASSERT_NE(doomed, nullptr);
  CommitOne(*store_, "s", "v1");
  auto held = doomed->AcquireTurn("s", {});
  ASSERT_TRUE(held.ok()) << held.error().message;

  std::atomic<bool> saw_other{false};
  TurnOptions options;
  options.on_other_process = [&] { saw_other = true; };
  auto next = std::async(std::launch::async, [&] { return store_->AcquireTurn("s", options); });
  EXPECT_EQ(next.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);

  // Kill the doomed replica's listener connection: the one holding its liveness lock.
  auto admin = Admin();
  auto killed = admin->Exec(
      "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND "
      "classid = $1 AND objid = $2 AND mode = 'ExclusiveLock' AND granted",
      {PgParam::Int(kAdvisoryNamespace), PgParam::Int(doomed->replica_id())}, "killing");
  ASSERT_TRUE(killed.ok()) << killed.error().message;
  ASSERT_EQ(killed->Rows(), 1);

  ASSERT_EQ(next.wait_for(kWait), std::future_status::ready);
  auto turn = next.get();
  ASSERT_TRUE(turn.ok()) << turn.error().message;
  EXPECT_TRUE(saw_other.load());
  EXPECT_EQ((*turn)->LastIssuedVersion(), 1);
  ASSERT_TRUE((*turn)->Commit(MakeVersion("v2 by the next in line", 1)).ok());
  turn->reset();

  auto late = (*held)->Commit(MakeVersion("v2 by the old holder", 1));
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(late.error().message.find("lost the turn"), std::string::npos) << late.error().message;
  held->reset();
  auto history = store_->History("s");
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ(*store_->ReadImage(history->back()), "v2 by the next in line");

  // The replica reconnects (a new replica id) and takes turns again.
  VersionInfo v3;
  for (auto start = std::chrono::steady_clock::now();
       std::chrono::steady_clock::now() - start < kWait;) {
    auto again = doomed->AcquireTurn("s", {});
    if (!again.ok()) continue;  // still reconnecting
    auto v = (*again)->Commit(MakeVersion("v3", 2));
    ASSERT_TRUE(v.ok()) << v.error().message;
    v3 = *v;
    break;
  }
  EXPECT_EQ(v3.version, 3);
}

// The replica running a task dies (its listener connection is killed, as with kill -9) while it
// holds the task's turn: the next reader on another replica finds the task failed, the dead
// replica's ticket is gone at once (no one had to wait for the turn to release it), and the late
// commit of the task's version is refused: nothing is committed after the task was reported.
TEST_F(PostgresStoreTest, ATaskWhoseReplicaDiesIsFailedItsTurnReleasedAndItsCommitRefused) {
  std::unique_ptr<PostgresSessionStore> doomed = OpenReplica();
  ASSERT_NE(doomed, nullptr);
  CommitOne(*store_, "s", "v1");
  NewTask task;
  task.owner = "o";
  task.session_id = "s";
  task.tool = "edit_image";
  Result<TaskRecord> t = doomed->CreateTask(task);
  ASSERT_TRUE(t.ok()) << t.error().message;
  const int64_t doomed_id = doomed->replica_id();
  auto held = doomed->AcquireTurn("s", {});
  ASSERT_TRUE(held.ok()) << held.error().message;
  EXPECT_EQ((*store_->GetTask(t->task_id, "o"))->status, TaskStatus::kWorking);

  auto admin = Admin();
  auto killed = admin->Exec(
      "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND "
      "classid = $1 AND objid = $2 AND mode = 'ExclusiveLock' AND granted",
      {PgParam::Int(kAdvisoryNamespace), PgParam::Int(doomed_id)}, "killing");
  ASSERT_TRUE(killed.ok()) << killed.error().message;
  ASSERT_EQ(killed->Rows(), 1);

  std::optional<TaskRecord> read;
  for (auto start = std::chrono::steady_clock::now();
       std::chrono::steady_clock::now() - start < kWait;) {
    Result<std::optional<TaskRecord>> got = store_->GetTask(t->task_id, "o");
    ASSERT_TRUE(got.ok()) << got.error().message;
    read = *got;
    if (read.has_value() && read->status != TaskStatus::kWorking) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the server ends the backend
  }
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->status, TaskStatus::kFailed);
  EXPECT_NE(read->error_json.find("replica running this task stopped"), std::string::npos);
  EXPECT_EQ(Count("SELECT count(*) FROM imgmcp.turn_tickets WHERE replica_id = " +
                  std::to_string(doomed_id)),
            0);

  auto late = (*held)->Commit(MakeVersion("v2 by the dead runner", 1),
                              IdempotencyRecord{TaskIdempotencyKey(t->task_id), "d"});
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.error().message.find("lost the turn"), std::string::npos) << late.error().message;
  held->reset();
  EXPECT_EQ(store_->History("s")->size(), 1u);
  TaskUpdate done;
  done.task_id = t->task_id;
  done.owner = "o";
  done.status = TaskStatus::kCompleted;
  done.result_json = "{}";
  Result<TaskRecord> too_late = doomed->UpdateTask(done);
  ASSERT_FALSE(too_late.ok());
  EXPECT_EQ(too_late.error().code, ErrorCode::kFailedPrecondition);
}

// A commit on one replica reaches the change listener of every other replica (not its own).
TEST_F(PostgresStoreTest, CommitsAndClearsReachOtherReplicas) {
  std::unique_ptr<PostgresSessionStore> other = OpenReplica();
  ASSERT_NE(other, nullptr);
  std::mutex mu;  // guards seen_here, seen_there
  std::condition_variable cv;
  std::vector<StoreChange> seen_here, seen_there;
  store_->SetChangeListener([&](const StoreChange& c) {
    std::lock_guard lock(mu);
    seen_here.push_back(c);
    cv.notify_all();
  });
  other->SetChangeListener([&](const StoreChange& c) {
    std::lock_guard lock(mu);
    seen_there.push_back(c);
    cv.notify_all();
  });
  CommitOne(*store_, "s", "one");
  CommitOne(*store_, "s", "two");
  {
    auto turn = store_->AcquireTurn("s", {});
    ASSERT_TRUE((*turn)->Clear().ok());
  }
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, kWait, [&] { return seen_there.size() >= 3; }));
  EXPECT_EQ(seen_there[0].session_id, "s");
  EXPECT_EQ(seen_there[0].version, 1);
  EXPECT_TRUE(seen_there[0].new_session);
  EXPECT_EQ(seen_there[1].version, 2);
  EXPECT_FALSE(seen_there[1].new_session);
  EXPECT_EQ(seen_there[2].version, 0);  // the clear
  EXPECT_TRUE(seen_here.empty());
  lock.unlock();
  other->SetChangeListener(nullptr);
}

// Task rows written on one replica (created, updated, settled) reach the task listener of every
// other replica, with their status; not their own.
TEST_F(PostgresStoreTest, TaskChangesReachOtherReplicas) {
  std::unique_ptr<PostgresSessionStore> other = OpenReplica();
  ASSERT_NE(other, nullptr);
  std::mutex mu;  // guards seen_here, seen_there
  std::condition_variable cv;
  std::vector<TaskChange> seen_here, seen_there;
  store_->SetTaskListener([&](const TaskChange& c) {
    std::lock_guard lock(mu);
    seen_here.push_back(c);
    cv.notify_all();
  });
  other->SetTaskListener([&](const TaskChange& c) {
    std::lock_guard lock(mu);
    seen_there.push_back(c);
    cv.notify_all();
  });
  NewTask task;
  task.owner = "o";
  task.tool = "edit_image";
  Result<TaskRecord> t = store_->CreateTask(task);
  ASSERT_TRUE(t.ok()) << t.error().message;
  TaskUpdate cancel;
  cancel.task_id = t->task_id;
  cancel.owner = "o";
  cancel.status = TaskStatus::kCancelled;
  ASSERT_TRUE(store_->UpdateTask(cancel).ok());
  EXPECT_FALSE(store_->UpdateTask(cancel).ok());  // refused: nothing written, nothing announced
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, kWait, [&] { return seen_there.size() >= 2; }));
  EXPECT_EQ(seen_there[0].task_id, t->task_id);
  EXPECT_EQ(seen_there[0].status, TaskStatus::kWorking);
  EXPECT_EQ(seen_there[1].task_id, t->task_id);
  EXPECT_EQ(seen_there[1].status, TaskStatus::kCancelled);
  EXPECT_EQ(seen_there[1].owner, "o");
  EXPECT_TRUE(seen_here.empty());
  lock.unlock();
  other->SetTaskListener(nullptr);
  store_->SetTaskListener(nullptr);
}

// A replica that writes the row of a task another replica runs (a cancel, or the settling of a
// dead runner's task) hears of it too: its own callers did not make that change. The runner
// hears of it as of any other replica's write.
TEST_F(PostgresStoreTest, WritingAnotherRunnersTaskIsReportedEverywhere) {
  std::unique_ptr<PostgresSessionStore> other = OpenReplica();
  ASSERT_NE(other, nullptr);
  std::mutex mu;  // guards seen_here, seen_there
  std::condition_variable cv;
  std::vector<TaskChange> seen_here, seen_there;
  store_->SetTaskListener([&](const TaskChange& c) {
    std::lock_guard lock(mu);
    seen_here.push_back(c);
    cv.notify_all();
  });
  other->SetTaskListener([&](const TaskChange& c) {
    std::lock_guard lock(mu);
    seen_there.push_back(c);
    cv.notify_all();
  });
  NewTask task;
  task.owner = "owner digest";
  task.tool = "edit_image";
  Result<TaskRecord> t = store_->CreateTask(task);  // run by store_
  ASSERT_TRUE(t.ok()) << t.error().message;
  TaskUpdate cancel;
  cancel.task_id = t->task_id;
  cancel.owner = task.owner;
  cancel.status = TaskStatus::kCancelled;
  ASSERT_TRUE(other->UpdateTask(cancel).ok());
  auto cancelled = [](const std::vector<TaskChange>& seen) {
    return !seen.empty() && seen.back().status == TaskStatus::kCancelled;
  };
  std::unique_lock lock(mu);
  ASSERT_TRUE(
      cv.wait_for(lock, kWait, [&] { return cancelled(seen_here) && cancelled(seen_there); }));
  EXPECT_EQ(seen_here.size(), 1u);  // not its own creation
  EXPECT_EQ(seen_here.back().task_id, t->task_id);
  EXPECT_EQ(seen_here.back().owner, "owner digest");
  EXPECT_EQ(seen_there.back().task_id, t->task_id);
  EXPECT_EQ(seen_there.back().owner, "owner digest");
  lock.unlock();
  other->SetTaskListener(nullptr);
  store_->SetTaskListener(nullptr);
}

// A task is created after its call reserved its turn: once CreateTask returns, that reservation's
// ticket is in the table, so a task created next (through any replica) is behind it.
TEST_F(PostgresStoreTest, CreatingATaskWaitsForTheTurnsReservedBeforeIt) {
  std::vector<std::unique_ptr<TurnReservation>> reserved;
  for (int i = 0; i < 20; ++i) {
    auto r = store_->ReserveTurn("ordered");
    ASSERT_TRUE(r.ok()) << r.error().message;
    reserved.push_back(std::move(*r));
  }
  NewTask task;
  task.owner = "o";
  task.session_id = "ordered";
  task.tool = "edit_image";
  ASSERT_TRUE(store_->CreateTask(task).ok());
  EXPECT_EQ(Count("SELECT count(*) FROM imgmcp.turn_tickets WHERE session_id = 'ordered'"), 20);
}

// Equal bytes are one blob, whatever session or version they belong to; bytes nobody refers to
// any more are deleted.
// Expired task rows are removed by one replica at a time: while another holds the sweep's
// advisory lock, a sweep leaves the rows to it; once it is free, the sweep removes them.
TEST_F(PostgresStoreTest, ExpiredTasksAreSweptByOneReplicaAtATime) {
  NewTask task;
  task.owner = "o";
  task.tool = "edit_image";
  task.ttl_ms = 1000;
  auto t = store_->CreateTask(task);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_TRUE(
      store_->UpdateTask({.task_id = t->task_id, .owner = "o", .status = TaskStatus::kCancelled})
          .ok());
  clock_.Advance(std::chrono::seconds(2));
  auto holder = Admin();
  ASSERT_NE(holder, nullptr);
  ASSERT_TRUE(holder->Exec("BEGIN", {}, "x").ok());
  ASSERT_TRUE(holder
                  ->Exec("SELECT pg_advisory_xact_lock(" + std::to_string(kAdvisoryNamespace) +
                             ", " + std::to_string(kTaskSweepLockKey) + ")",
                         {}, "taking the sweep's lock")
                  .ok());
  auto swept = store_->SweepTasks();
  ASSERT_TRUE(swept.ok()) << swept.error().message;
  EXPECT_EQ(*swept, 0);  // another replica is sweeping
  EXPECT_EQ(Count("SELECT count(*) FROM imgmcp.tasks"), 1);
  ASSERT_TRUE(holder->Exec("COMMIT", {}, "x").ok());
  swept = store_->SweepTasks();
  ASSERT_TRUE(swept.ok()) << swept.error().message;
  EXPECT_EQ(*swept, 1);
  EXPECT_EQ(Count("SELECT count(*) FROM imgmcp.tasks"), 0);
}

// The batch poll lock lives on a connection of its own: when that connection is lost (the
// replica's network, or its backend killed) the lock says so, and another replica takes it.
TEST_F(PostgresStoreTest, ABatchPollLockWhoseConnectionIsLostSaysSoAndPassesOn) {
  auto lead = store_->batch_tasks().TryLead();
  ASSERT_TRUE(lead.ok()) << lead.error().message;
  ASSERT_NE(*lead, nullptr);
  ASSERT_TRUE((*lead)->Held());
  auto other = OpenReplica();
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(*other->batch_tasks().TryLead(), nullptr);
  // The advisory lock (kAdvisoryNamespace, kBatchPollLockKey): its holder's backend goes.
  const std::string holder =
      "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND classid = " +
      std::to_string(kAdvisoryNamespace) +
      " AND objid = " + std::to_string(static_cast<uint32_t>(kBatchPollLockKey)) +
      " AND objsubid = 2";
  ASSERT_EQ(Count("SELECT count(*) FROM (" + holder + ") t"), 1);
  EXPECT_FALSE((*lead)->Held());
  std::unique_ptr<BatchPollLock> successor;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (successor == nullptr && std::chrono::steady_clock::now() < deadline) {
    auto taken = other->batch_tasks().TryLead();
    ASSERT_TRUE(taken.ok()) << taken.error().message;
    successor = std::move(*taken);
    if (successor == nullptr) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_NE(successor, nullptr);
  EXPECT_TRUE(successor->Held());
}

TEST_F(PostgresStoreTest, EqualBytesAreStoredOnce) {
  options_.max_versions_per_session = 2;
  store_ = OpenReplica();
  const std::string image(100000, 'x');
  CommitOne(*store_, "a", image);
  CommitOne(*store_, "b", image);
  CommitOne(*store_, "a", image);  // a revert, say
  EXPECT_EQ(Count("SELECT count(*) FROM imgmcp.blobs"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM imgmcp.versions"), 3);
  CommitOne(*store_, "a", "new bytes");  // prunes a's v1; v2 still uses the blob
  EXPECT_EQ(Count("SELECT count(*) FROM imgmcp.blobs"), 2);
  CommitOne(*store_, "a", "newer bytes");  // prunes a's v2; b still uses it
  EXPECT_EQ(Count("SELECT count(*) FROM imgmcp.blobs"), 3);
  {
    auto turn = store_->AcquireTurn("b", {});
    ASSERT_TRUE((*turn)->Clear().ok());  // the last reference
  }
  EXPECT_EQ(Count("SELECT count(*) FROM imgmcp.blobs"), 2);
  EXPECT_EQ(*store_->ReadImage(*store_->GetVersion("a", 4)), "newer bytes");
}

TEST_F(PostgresStoreTest, ReplicasStartingTogetherMigrateOnce) {
  PostgresBacking fresh;
  std::vector<std::future<Result<std::unique_ptr<PostgresSessionStore>>>> opening;
  for (int i = 0; i < 4; ++i) {
    opening.push_back(std::async(std::launch::async, [&, i] {
      PostgresStoreOptions pg;
      pg.url = fresh.url();
      StoreOptions options;
      options.data_dir = dir_.path() / ("together" + std::to_string(i));
      return PostgresSessionStore::Open(options, pg, clock_);
    }));
  }
  std::vector<std::unique_ptr<PostgresSessionStore>> stores;
  for (auto& f : opening) {
    auto s = f.get();
    ASSERT_TRUE(s.ok()) << s.error().message;
    stores.push_back(std::move(*s));
  }
  auto conn = PgConnection::Connect(fresh.url(), "test");
  ASSERT_TRUE(conn.ok());
  auto r = (*conn)->Exec("SELECT count(*), max(version) FROM imgmcp.schema_version", {}, "x");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->Int(0, 0), kPgSchemaVersion);
  EXPECT_EQ(r->Int(0, 1), kPgSchemaVersion);
  CommitOne(*stores[0], "s", "x");
  EXPECT_EQ(stores[3]->GetVersion("s", 1)->sha256, Sha256Hex("x"));
}

// A database of schema v1 (before idempotency keys) is migrated when a replica opens it: its
// versions stay, and keys are recorded from then on.
TEST_F(PostgresStoreTest, AVersion1DatabaseIsMigratedAndKeepsWorking) {
  CommitOne(*store_, "old", "one");
  store_.reset();
  {
    auto admin = Admin();
    ASSERT_TRUE(admin
                    ->Run("DROP TABLE imgmcp.shared_keys; DROP TABLE imgmcp.audit; "
                          "DROP TABLE imgmcp.call_counts; ALTER TABLE "
                          "imgmcp.sessions DROP "
                          "COLUMN principal; DROP TABLE imgmcp.spend; DROP TABLE imgmcp.tasks; "
                          "DROP TABLE imgmcp.idempotency_keys; DELETE "
                          "FROM imgmcp.schema_version WHERE version > 1",
                          "x")
                    .ok());
  }
  store_ = OpenReplica();
  ASSERT_NE(store_, nullptr);
  EXPECT_EQ(Count("SELECT max(version) FROM imgmcp.schema_version"), kPgSchemaVersion);
  EXPECT_EQ(store_->GetVersion("old", 1)->sha256, Sha256Hex("one"));
  auto turn = store_->AcquireTurn("old", {});
  ASSERT_TRUE(turn.ok());
  auto v2 = (*turn)->Commit(MakeVersion("two", 1), IdempotencyRecord{"k1", "d"});
  ASSERT_TRUE(v2.ok()) << v2.error().message;
  turn->reset();
  auto found = store_->FindAppliedKey("old", "k1");
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->version->version, 2);
  NewTask task;  // tasks (v3) are kept from then on
  task.tool = "edit_image";
  Result<TaskRecord> t = store_->CreateTask(task);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_TRUE(store_->GetTask(t->task_id, "")->has_value());
}

TEST_F(PostgresStoreTest, ANewerSchemaIsRefused) {
  auto admin = Admin();
  ASSERT_TRUE(admin->Run("INSERT INTO imgmcp.schema_version(version) VALUES (99)", "x").ok());
  PostgresStoreOptions pg;
  pg.url = backing_.url();
  StoreOptions options;
  options.data_dir = dir_.path() / "newer";
  auto store = PostgresSessionStore::Open(options, pg, clock_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(store.error().message.find("99"), std::string::npos) << store.error().message;
}

// The test cluster's default is synchronous_commit=off: the store's connections ask for on.
TEST_F(PostgresStoreTest, CommitsAreDurableEvenWhereTheServerDefaultIsNot) {
  auto admin = Admin();
  auto server_default = admin->Exec(
      "SELECT reset_val FROM pg_settings WHERE name = "
      "'synchronous_commit'",
      {}, "x");
  ASSERT_TRUE(server_default.ok());
  EXPECT_EQ(server_default->Text(0, 0), "off");
  auto mine = PgConnection::Connect(backing_.url(), "test");
  ASSERT_TRUE(mine.ok());
  auto shown = (*mine)->Exec("SHOW synchronous_commit", {}, "x");
  ASSERT_TRUE(shown.ok());
  EXPECT_EQ(shown->Text(0, 0), "on");
}

TEST_F(PostgresStoreTest, CorruptBytesAreDataLoss) {
  const VersionInfo v = CommitOne(*store_, "s", "precious");
  auto admin = Admin();
  ASSERT_TRUE(admin->Run("UPDATE imgmcp.blobs SET bytes = 'tampered'::bytea", "x").ok());
  std::unique_ptr<PostgresSessionStore> fresh = OpenReplica();  // nothing cached
  auto r = fresh->ReadImage(v);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kDataLoss);
  EXPECT_NE(r.error().message.find("sha256"), std::string::npos) << r.error().message;
}

TEST_F(PostgresStoreTest, TheLocalCopyIsWrittenAgainWhenNeeded) {
  const VersionInfo v = CommitOne(*store_, "s", "bytes of v1");
  EXPECT_TRUE(v.path.string().rfind(store_->cache_dir().string(), 0) == 0) << v.path;
  std::filesystem::remove(v.path);
  auto again = store_->GetVersion("s", 1);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->path, v.path);
  EXPECT_EQ(*ReadWholeFile(v.path), "bytes of v1");
  // Another replica has its own copy, in its own data dir.
  std::unique_ptr<PostgresSessionStore> other = OpenReplica();
  auto there = other->ReadSession("s", std::nullopt, true);
  ASSERT_TRUE(there.ok() && there->version.has_value());
  EXPECT_NE(there->version->path, v.path);
  EXPECT_EQ(*ReadWholeFile(there->version->path), "bytes of v1");
}

TEST_F(PostgresStoreTest, AnUnreachableServerIsAClearErrorWithoutThePassword) {
  PostgresStoreOptions pg;
  // A port nobody listens on (ours, after the server there was asked to stop: none is needed).
  pg.url = "postgresql://imgmcp:s3cret-pw@127.0.0.1:1/imgmcp?connect_timeout=2";
  StoreOptions options;
  options.data_dir = dir_.path() / "unreachable";
  auto store = PostgresSessionStore::Open(options, pg, clock_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(store.error().message.find("127.0.0.1:1/imgmcp"), std::string::npos)
      << store.error().message;
  EXPECT_EQ(store.error().message.find("s3cret-pw"), std::string::npos) << store.error().message;
}

TEST_F(PostgresStoreTest, BadUrlsAreInvalidArguments) {
  PostgresStoreOptions pg;
  pg.url = "postgresql://[broken";
  StoreOptions options;
  options.data_dir = dir_.path() / "bad";
  auto store = PostgresSessionStore::Open(options, pg, clock_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(IsPostgresUrl("postgresql://h/db"));
  EXPECT_TRUE(IsPostgresUrl("postgres://h/db"));
  EXPECT_FALSE(IsPostgresUrl("sqlite"));
}

}  // namespace
}  // namespace imgmcp::session::postgres
