// The typed SessionStore suite, with threads (label concurrency: also runs under ThreadSanitizer):
// turns in arrival order (reservation order, not thread start order), cancellation while queued,
// sessions in parallel, many threads on one session and on many (no lost update, versions exactly
// once, commit order = arrival order, every parent the previous version), reads that never mix
// two moments, two stores on one backing (processes or replicas) sharing one order, an
// idempotency key applied once however its callers race, a task that two stores race to
// complete and to cancel ending exactly one way, and a task's commit racing its cancel decided
// once (cancelled and nothing committed, or committed and not cancelled), and holds racing for
// one budget from two stores: as many run as it has room for, not one more; and batch tasks that
// pollers on two stores group at once, each task into exactly one group.
//
// How arrival order is made observable in the stress tests: a thread takes `entry_mu` (its
// session's), appends itself to the arrival log and calls AcquireTurn; it lets go of `entry_mu`
// as soon as its ticket is in the line — when on_queued fires (it has to wait) or when AcquireTurn
// returns (it did not). So at most one edit is ever between "logged" and "queued", and the
// arrival log is the ticket order. A FIFO store must then commit in exactly that order.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <future>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <stop_token>
#include <thread>
#include <utility>

#include "session/chain_store.h"
#include "store_backings.h"
#include "test_util.h"

namespace imgmcp::session {
namespace {

using testing::FakeClock;
using testing::MakeVersion;

constexpr auto kWait = std::chrono::seconds(30);  // bound for waits that should succeed quickly

template <typename Backing>
class StoreConcurrencyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.max_versions_per_session = 0;  // keep every version for the checks
    store_ = Open();
    ASSERT_NE(store_, nullptr);
  }
  std::unique_ptr<SessionStore> Open() {
    Result<std::unique_ptr<SessionStore>> opened = backing_.Open(options_, clock_);
    EXPECT_TRUE(opened.ok()) << opened.error().message;
    return opened.ok() ? std::move(*opened) : nullptr;
  }

  Backing backing_;  // destroyed after the stores below
  FakeClock clock_;
  StoreOptions options_;
  std::unique_ptr<SessionStore> store_;
};

TYPED_TEST_SUITE(StoreConcurrencyTest, testing::Backings, testing::BackingNames);

TYPED_TEST(StoreConcurrencyTest, DifferentSessionsRunInParallel) {
  auto a = this->store_->AcquireTurn("a", {});
  ASSERT_TRUE(a.ok());
  auto b = std::async(std::launch::async, [&] { return this->store_->AcquireTurn("b", {}).ok(); });
  ASSERT_EQ(b.wait_for(kWait), std::future_status::ready);
  EXPECT_TRUE(b.get());
}

// A stop of the token wakes a queued edit at once (no store looks at the flag on a timer): the
// wait ends within kCancelLatency of the cancel, an upper bound generous for a loaded machine.
TYPED_TEST(StoreConcurrencyTest, ACancelledQueuedTurnEndsWithinMillisecondsOfTheCancel) {
  constexpr auto kCancelLatency = std::chrono::milliseconds(20);
  SessionStore& store = *this->store_;
  auto holder = store.AcquireTurn("s", {});
  ASSERT_TRUE(holder.ok());
  std::promise<void> queued;
  bool reported = false;
  TurnOptions opts;
  std::stop_source cancel;
  opts.cancel = cancel.get_token();
  opts.on_queued = [&](int) {
    if (!std::exchange(reported, true)) queued.set_value();
  };
  auto waiter = std::async(std::launch::async, [&] {
    auto turn = store.AcquireTurn("s", opts);
    return std::make_pair(std::chrono::steady_clock::now(),
                          turn.ok() ? ErrorCode::kInternal : turn.error().code);
  });
  struct CancelOnExit {  // a failed assertion must not leave the waiter blocked forever
    std::stop_source source;
    ~CancelOnExit() { source.request_stop(); }
  } cancel_on_exit{cancel};
  ASSERT_EQ(queued.get_future().wait_for(kWait), std::future_status::ready);
  // Settled in its wait: nothing will happen until the cancel.
  EXPECT_EQ(waiter.wait_for(std::chrono::milliseconds(30)), std::future_status::timeout);
  const auto cancelled_at = std::chrono::steady_clock::now();
  cancel.request_stop();
  ASSERT_EQ(waiter.wait_for(kWait), std::future_status::ready);
  const auto [returned_at, code] = waiter.get();
  EXPECT_EQ(code, ErrorCode::kCancelled);
  EXPECT_LT(returned_at - cancelled_at, kCancelLatency)
      << std::chrono::duration<double, std::milli>(returned_at - cancelled_at).count() << " ms";
  EXPECT_EQ((*holder)->LastIssuedVersion(), 0);  // nothing committed
}

TYPED_TEST(StoreConcurrencyTest, CancelWhileQueuedCommitsNothingAndLeavesTheLine) {
  SessionStore& store = *this->store_;
  auto holder = store.AcquireTurn("s", {});
  ASSERT_TRUE(holder.ok());
  std::mutex mu;  // guards queued
  std::condition_variable cv;
  int queued = -1;
  TurnOptions opts;
  std::stop_source opts_stop;
  opts.cancel = opts_stop.get_token();
  opts.on_queued = [&](int ahead) {
    std::lock_guard lock(mu);
    queued = ahead;
    cv.notify_all();
  };
  auto waiter = std::async(std::launch::async, [&] {
    auto turn = store.AcquireTurn("s", opts);
    return turn.ok() ? std::optional<ErrorCode>() : std::optional(turn.error().code);
  });
  struct CancelOnExit {  // a failed assertion must not leave the waiter blocked forever
    std::stop_source source;
    ~CancelOnExit() { source.request_stop(); }
  } cancel_on_exit{opts_stop};
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, kWait, [&] { return queued == 1; }));
  }
  opts_stop.request_stop();
  ASSERT_EQ(waiter.wait_for(kWait), std::future_status::ready);
  EXPECT_EQ(waiter.get(), ErrorCode::kCancelled);
  ASSERT_TRUE((*holder)->Commit(MakeVersion("x")).ok());
  EXPECT_EQ((*holder)->LastIssuedVersion(), 1);
  holder->reset();
  // The cancelled edit left the line: the next one is not stuck behind it.
  auto next = std::async(std::launch::async, [&] { return store.AcquireTurn("s", {}); });
  ASSERT_EQ(next.wait_for(kWait), std::future_status::ready);
  auto turn = next.get();
  ASSERT_TRUE(turn.ok());
  EXPECT_EQ((*turn)->LastIssuedVersion(), 1);
}

// Turns follow the order places were reserved (arrival), not the order threads start waiting:
// the protocol core reserves on its reading thread and worker threads start in any order.
TYPED_TEST(StoreConcurrencyTest, TurnsFollowReservationOrderNotThreadStartOrder) {
  SessionStore& store = *this->store_;
  constexpr int kCalls = 12;
  std::vector<std::unique_ptr<TurnReservation>> reservations;
  for (int i = 0; i < kCalls; ++i) {
    auto r = store.ReserveTurn("s");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ((*r)->session_id(), "s");
    reservations.push_back(std::move(*r));
  }
  std::mutex mu;  // guards order
  std::vector<int> order;
  std::vector<std::thread> threads;
  for (int i = kCalls - 1; i >= 0; --i) {  // start the last-reserved first
    threads.emplace_back([&, i, r = std::move(reservations[i])]() mutable {
      auto turn = store.AcquireReservedTurn(std::move(r), {});
      ASSERT_TRUE(turn.ok()) << turn.error().message;
      auto v = (*turn)->Commit(MakeVersion("bytes-" + std::to_string(i)));
      ASSERT_TRUE(v.ok()) << v.error().message;
      std::lock_guard lock(mu);
      order.push_back(i);
    });
  }
  for (auto& t : threads) t.join();
  std::vector<int> expected(kCalls);
  for (int i = 0; i < kCalls; ++i) expected[i] = i;
  EXPECT_EQ(order, expected);
}

TYPED_TEST(StoreConcurrencyTest, DroppingAReservationLetsTheNextOneIn) {
  SessionStore& store = *this->store_;
  auto first = store.ReserveTurn("s");
  auto second = store.ReserveTurn("s");
  ASSERT_TRUE(first.ok() && second.ok());
  first->reset();  // e.g. the call was cancelled before it started
  auto turn = std::async(std::launch::async,
                         [&] { return store.AcquireReservedTurn(std::move(*second), {}).ok(); });
  ASSERT_EQ(turn.wait_for(kWait), std::future_status::ready);
  EXPECT_TRUE(turn.get());
}

// A turn held through another store on the same data (another process or replica) is waited
// for; the wait is reported once, and can be cancelled.
TYPED_TEST(StoreConcurrencyTest, WaitsForATurnHeldThroughAnotherStore) {
  std::unique_ptr<SessionStore> other = this->Open();
  ASSERT_NE(other, nullptr);
  auto held = other->AcquireTurn("s", {});
  ASSERT_TRUE(held.ok()) << held.error().message;

  std::atomic<int> reports{0};
  std::promise<void> first_report;
  TurnOptions cancelled;
  std::stop_source cancelled_stop;
  cancelled.cancel = cancelled_stop.get_token();
  cancelled.on_other_process = [&] {
    if (++reports == 1) first_report.set_value();
  };
  auto first =
      std::async(std::launch::async, [&] { return this->store_->AcquireTurn("s", cancelled); });
  struct CancelOnExit {  // a failed assertion must not leave the waiter blocked forever
    std::stop_source source;
    ~CancelOnExit() { source.request_stop(); }
  } cancel_on_exit{cancelled_stop};
  ASSERT_EQ(first_report.get_future().wait_for(kWait), std::future_status::ready);
  EXPECT_EQ(first.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  cancelled_stop.request_stop();
  ASSERT_EQ(first.wait_for(kWait), std::future_status::ready);
  auto r = first.get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(reports.load(), 1);

  std::promise<void> second_report;
  TurnOptions plain;
  plain.on_other_process = [&] {
    if (++reports == 2) second_report.set_value();
  };
  auto second =
      std::async(std::launch::async, [&] { return this->store_->AcquireTurn("s", plain); });
  ASSERT_EQ(second_report.get_future().wait_for(kWait), std::future_status::ready);
  EXPECT_EQ(second.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  ASSERT_TRUE((*held)->Commit(MakeVersion("other")).ok());
  held->reset();  // the other store's turn ends
  ASSERT_EQ(second.wait_for(kWait), std::future_status::ready);
  auto turn = second.get();
  ASSERT_TRUE(turn.ok()) << turn.error().message;
  ASSERT_TRUE((*turn)->Current().has_value());
  EXPECT_EQ((*turn)->Current()->version, 1);
  EXPECT_EQ(reports.load(), 2);
}

struct SessionLog {
  std::mutex entry_mu;  // held from "logged as arrived" until "ticket is in the line"
  std::mutex log_mu;    // guards arrivals, commits, failures and max_ahead
  std::vector<std::string> arrivals;
  std::vector<std::string> commits;
  std::vector<std::string> failures;
  int max_ahead = 0;  // the longest wait reported by on_queued
};

std::string EditName(int thread, int seq) {
  return "t" + std::to_string(thread) + "-s" + std::to_string(seq);
}

void RunEdit(SessionStore& store, const std::string& session_id, SessionLog& log, int thread,
             int seq) {
  const std::string name = EditName(thread, seq);
  auto fail = [&](const std::string& why) {
    std::lock_guard lock(log.log_mu);
    log.failures.push_back(name + ": " + why);
  };
  std::unique_lock entry(log.entry_mu);
  {
    std::lock_guard lock(log.log_mu);
    log.arrivals.push_back(name);
  }
  TurnOptions opts;
  std::stop_source opts_stop;
  opts.cancel = opts_stop.get_token();
  opts.on_queued = [&](int ahead) {
    if (ahead < 1) fail("on_queued with ahead < 1");
    {
      std::lock_guard lock(log.log_mu);
      log.max_ahead = std::max(log.max_ahead, ahead);
    }
    if (entry.owns_lock()) entry.unlock();
  };
  auto turn = store.AcquireTurn(session_id, opts);
  if (entry.owns_lock()) entry.unlock();
  if (!turn.ok()) return fail(turn.error().message);

  const std::optional<VersionInfo> current = (*turn)->Current();
  const int64_t n = current.has_value() ? current->version : 0;
  if (n != (*turn)->LastIssuedVersion()) fail("current is not the last issued version");
  NewVersion nv = MakeVersion(name + " read v" + std::to_string(n),
                              n > 0 ? std::optional<int64_t>(n) : std::nullopt);
  nv.prompt = nv.bytes;
  {
    // Logged inside the turn, so this is the true commit order.
    std::lock_guard lock(log.log_mu);
    log.commits.push_back(name);
  }
  Result<VersionInfo> v = (*turn)->Commit(nv);
  if (!v.ok()) return fail(v.error().message);
  if (v->version != n + 1)
    fail("lost update: read v" + std::to_string(n) + ", committed v" + std::to_string(v->version));
}

// Verifies one session's chain against its log.
void CheckSession(SessionStore& store, const std::string& session_id, const SessionLog& log,
                  size_t expected_versions) {
  EXPECT_TRUE(log.failures.empty())
      << log.failures.size() << " failures, first: " << log.failures.front();
  ASSERT_EQ(log.arrivals.size(), expected_versions);
  EXPECT_EQ(log.commits, log.arrivals) << "commit order differs from arrival order";

  auto history = store.History(session_id);
  ASSERT_TRUE(history.ok()) << history.error().message;
  ASSERT_EQ(history->size(), expected_versions);
  std::set<std::string> names;
  for (size_t i = 0; i < history->size(); ++i) {
    const VersionInfo& v = (*history)[i];
    const int64_t expected = static_cast<int64_t>(i) + 1;
    ASSERT_EQ(v.version, expected);
    if (expected == 1) {
      EXPECT_FALSE(v.parent.has_value());
    } else {
      EXPECT_EQ(v.parent, expected - 1);
    }
    const std::string name = v.prompt.substr(0, v.prompt.find(' '));
    EXPECT_EQ(v.prompt, name + " read v" + std::to_string(expected - 1));
    EXPECT_EQ(name, log.commits[i]);
    EXPECT_TRUE(names.insert(name).second) << "edit committed twice: " << name;
    Result<std::string> bytes = store.ReadImage(v);
    ASSERT_TRUE(bytes.ok()) << bytes.error().message;
    EXPECT_EQ(*bytes, v.prompt);
  }
}

TYPED_TEST(StoreConcurrencyTest, ManyThreadsOnOneSession) {
  constexpr int kThreads = TypeParam::kStressThreads;
  constexpr int kEdits = TypeParam::kStressEditsPerThread;
  SessionLog log;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int s = 0; s < kEdits; ++s) RunEdit(*this->store_, "one", log, t, s);
    });
  }
  for (auto& th : threads) th.join();
  CheckSession(*this->store_, "one", log, kThreads * kEdits);
  EXPECT_GE(log.max_ahead, 2) << "the line never formed: the test did not exercise queueing";
}

TYPED_TEST(StoreConcurrencyTest, ManyThreadsOnManySessions) {
  constexpr int kThreads = TypeParam::kStressThreads;
  constexpr int kEdits = TypeParam::kStressEditsPerThread;
  constexpr int kSessions = kThreads / 4;
  std::map<std::string, SessionLog> logs;
  for (int i = 0; i < kSessions; ++i) logs["s" + std::to_string(i)];
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string id = "s" + std::to_string(t % kSessions);
      for (int s = 0; s < kEdits; ++s) RunEdit(*this->store_, id, logs.at(id), t, s);
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& [id, log] : logs) {
    SCOPED_TRACE(id);
    CheckSession(*this->store_, id, log, kThreads / kSessions * kEdits);
  }
  auto page = this->store_->ListSessions(std::nullopt, 100);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->sessions.size(), static_cast<size_t>(kSessions));
}

// Two stores on one backing (two processes, two replicas), threads on both editing one session:
// still one chain, every edit on top of the previous one, each exactly once.
TYPED_TEST(StoreConcurrencyTest, TwoStoresShareOneOrder) {
  std::unique_ptr<SessionStore> other = this->Open();
  ASSERT_NE(other, nullptr);
  constexpr int kThreadsPerStore = 4;
  constexpr int kEdits = TypeParam::kStressEditsPerThread / 2;
  std::mutex mu;  // guards failures
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (int t = 0; t < 2 * kThreadsPerStore; ++t) {
    SessionStore* store = t % 2 == 0 ? this->store_.get() : other.get();
    threads.emplace_back([&, store, t] {
      for (int i = 0; i < kEdits; ++i) {
        auto turn = store->AcquireTurn("shared", {});
        if (!turn.ok()) {
          std::lock_guard lock(mu);
          failures.push_back(turn.error().message);
          continue;
        }
        const int64_t n = (*turn)->LastIssuedVersion();
        NewVersion nv = MakeVersion(EditName(t, i) + " read v" + std::to_string(n),
                                    n > 0 ? std::optional<int64_t>(n) : std::nullopt);
        auto v = (*turn)->Commit(nv);
        std::lock_guard lock(mu);
        if (!v.ok()) {
          failures.push_back(v.error().message);
        } else if (v->version != n + 1) {
          failures.push_back("lost update at v" + std::to_string(n));
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_TRUE(failures.empty()) << failures.size() << " failures, first: " << failures.front();
  for (SessionStore* store : {this->store_.get(), other.get()}) {
    auto history = store->History("shared");
    ASSERT_TRUE(history.ok()) << history.error().message;
    ASSERT_EQ(history->size(), static_cast<size_t>(2 * kThreadsPerStore * kEdits));
    std::set<std::string> names;
    for (size_t i = 0; i < history->size(); ++i) {
      const VersionInfo& v = (*history)[i];
      ASSERT_EQ(v.version, static_cast<int64_t>(i) + 1);
      const std::string bytes = *store->ReadImage(v);
      EXPECT_NE(bytes.find(" read v" + std::to_string(i)), std::string::npos) << bytes;
      EXPECT_TRUE(names.insert(bytes.substr(0, bytes.find(' '))).second) << bytes;
    }
  }
}

// Readers on their own store (as another process would be) while writers commit: every
// ReadSession is one moment: its version is the newest entry of its history.
// The tools' protocol for an idempotency key (look it up in the turn; commit with it when it is
// not there), run by threads on two stores on one backing (processes or replicas) at once: one
// commit, and every caller gets its version.
TYPED_TEST(StoreConcurrencyTest, AKeyIsAppliedOnceWhateverTheRace) {
  std::unique_ptr<SessionStore> other = this->Open();
  ASSERT_NE(other, nullptr);
  constexpr int kCalls = 8;
  std::vector<std::future<Result<int64_t>>> calls;
  for (int i = 0; i < kCalls; ++i) {
    SessionStore* store = i % 2 == 0 ? this->store_.get() : other.get();
    calls.push_back(std::async(std::launch::async, [store]() -> Result<int64_t> {
      ASSIGN_OR_RETURN(std::unique_ptr<EditTurn> turn, store->AcquireTurn("s", {}));
      ASSIGN_OR_RETURN(std::optional<AppliedKey> applied, store->FindAppliedKey("s", "once"));
      if (applied.has_value()) return applied->version->version;
      ASSIGN_OR_RETURN(VersionInfo v,
                       turn->Commit(MakeVersion("bytes"), IdempotencyRecord{"once", "d"}));
      return v.version;
    }));
  }
  for (auto& call : calls) {
    ASSERT_EQ(call.wait_for(kWait), std::future_status::ready);
    Result<int64_t> version = call.get();
    ASSERT_TRUE(version.ok()) << version.error().message;
    EXPECT_EQ(*version, 1);
  }
  EXPECT_EQ(this->store_->History("s")->size(), 1u);
}

TYPED_TEST(StoreConcurrencyTest, ReadSessionNeverMixesTwoMomentsWhileOthersCommit) {
  std::unique_ptr<SessionStore> reader_store = this->Open();
  ASSERT_NE(reader_store, nullptr);
  constexpr int kWriters = 4;
  constexpr int kCommitsPerWriter = TypeParam::kStressEditsPerThread * 2;
  std::atomic<bool> writing{true};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kCommitsPerWriter; ++i) {
        auto turn = this->store_->AcquireTurn("read", {});
        ASSERT_TRUE(turn.ok()) << turn.error().message;
        std::optional<int64_t> parent;
        if (auto cur = (*turn)->Current()) parent = cur->version;
        ASSERT_TRUE(
            (*turn)
                ->Commit(MakeVersion("w" + std::to_string(w) + "-" + std::to_string(i), parent))
                .ok());
      }
    });
  }
  std::vector<std::string> failures;
  std::set<int64_t> seen;
  std::thread reader([&] {
    while (writing.load()) {
      auto snap = reader_store->ReadSession("read", std::nullopt, true);
      if (!snap.ok()) continue;  // before the first commit the session does not exist
      if (snap->history.empty() || !snap->version.has_value()) continue;
      seen.insert(snap->version->version);
      if (snap->version->version != snap->history.back().version) {
        failures.push_back("version " + std::to_string(snap->version->version) +
                           " with a history ending at " +
                           std::to_string(snap->history.back().version));
      }
      if (snap->last_issued_version < snap->version->version) {
        failures.push_back("last issued below the version read");
      }
    }
  });
  for (auto& th : writers) th.join();
  writing = false;
  reader.join();
  EXPECT_TRUE(failures.empty()) << failures.size() << " mixed reads, first: " << failures[0];
  EXPECT_GT(seen.size(), 1u) << "the reads never overlapped a commit";
}

// Two stores on one backing (a replica finishing the task, another cancelling it) race to end the
// same task: exactly one wins, the loser hears which status the task already has, and every read
// agrees with the winner.
// Four pollers (two threads on each of two stores: two processes or replicas) group 200 batch
// tasks at once, 7 at a time, while more are still being created: every task lands in exactly
// one group, no group holds more than 7, and none is left over.
TYPED_TEST(StoreConcurrencyTest, PollersGroupingAtOnceTakeEachBatchTaskOnce) {
  std::unique_ptr<SessionStore> other = this->Open();
  ASSERT_NE(other, nullptr);
  constexpr int kTasks = 200;
  constexpr int kLimit = 7;
  std::set<std::string> created;
  std::atomic<bool> creating{true};
  std::mutex mu;                               // guards grouped and groups below
  std::map<std::string, std::string> grouped;  // task id → its group
  std::map<std::string, size_t> groups;        // group → its size
  std::atomic<int> next_group{0};
  std::atomic<int> in_flight{0};       // Group calls under way now
  std::atomic<int> most_in_flight{0};  // the race was run: calls overlapped
  auto poll = [&](SessionStore* store, int poller) {
    BatchTasks batch = dynamic_cast<ChainStore&>(*store).batch_tasks();
    while (true) {
      const bool last_round = !creating.load();
      const std::string group = "g-" + std::to_string(poller) + "-" + std::to_string(next_group++);
      const int now = ++in_flight;
      for (int seen = most_in_flight.load(); now > seen;) {
        if (most_in_flight.compare_exchange_weak(seen, now)) break;
      }
      Result<std::vector<TaskRecord>> got = batch.Group("model-a", group, kLimit, 0);
      --in_flight;
      ASSERT_TRUE(got.ok()) << got.error().message;
      {
        std::lock_guard<std::mutex> lock(mu);
        groups[group] = got->size();
        for (const TaskRecord& t : *got) {
          EXPECT_EQ(t.batch_group, group);
          EXPECT_TRUE(grouped.emplace(t.task_id, group).second) << t.task_id << " grouped twice";
        }
      }
      if (last_round && got->empty()) return;
      // A poller between two rounds, as the real one is (far shorter): lets the creators write.
      if (got->empty()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  };
  std::vector<std::thread> pollers;
  for (int i = 0; i < 4; ++i) {
    pollers.emplace_back(poll, i % 2 == 0 ? this->store_.get() : other.get(), i);
  }
  for (int i = 0; i < kTasks; ++i) {
    NewTask task;
    task.owner = "o";
    task.tool = "generate_image";
    task.batch_model = "model-a";
    Result<TaskRecord> t = (i % 2 == 0 ? this->store_ : other)->CreateTask(task);
    ASSERT_TRUE(t.ok()) << t.error().message;
    created.insert(t->task_id);
  }
  creating = false;
  for (std::thread& t : pollers) t.join();
  std::set<std::string> taken;
  for (const auto& [id, group] : grouped) taken.insert(id);
  EXPECT_EQ(taken, created);
  for (const auto& [group, size] : groups) EXPECT_LE(size, static_cast<size_t>(kLimit)) << group;
  EXPECT_GE(most_in_flight.load(), 2) << "no two pollers ever grouped at the same time";
}

TYPED_TEST(StoreConcurrencyTest, ACompleteAndACancelRacingHaveExactlyOneWinner) {
  std::unique_ptr<SessionStore> other = this->Open();
  ASSERT_NE(other, nullptr);
  constexpr int kRounds = 20;
  for (int round = 0; round < kRounds; ++round) {
    NewTask task;
    task.owner = "o";
    task.tool = "edit_image";
    Result<TaskRecord> t = this->store_->CreateTask(task);
    ASSERT_TRUE(t.ok()) << t.error().message;
    TaskUpdate complete;
    complete.task_id = t->task_id;
    complete.owner = "o";
    complete.status = TaskStatus::kCompleted;
    complete.result_json = "{}";
    TaskUpdate cancel = complete;
    cancel.status = TaskStatus::kCancelled;
    cancel.result_json.reset();
    std::promise<void> go;
    std::shared_future<void> start = go.get_future().share();
    auto finisher = std::async(std::launch::async, [&] {
      start.wait();
      return this->store_->UpdateTask(complete);
    });
    auto canceller = std::async(std::launch::async, [&] {
      start.wait();
      return other->UpdateTask(cancel);
    });
    go.set_value();
    ASSERT_EQ(finisher.wait_for(kWait), std::future_status::ready);
    ASSERT_EQ(canceller.wait_for(kWait), std::future_status::ready);
    Result<TaskRecord> done = finisher.get();
    Result<TaskRecord> cancelled = canceller.get();
    ASSERT_NE(done.ok(), cancelled.ok()) << "round " << round;
    const Result<TaskRecord>& loser = done.ok() ? cancelled : done;
    const TaskStatus winner = done.ok() ? TaskStatus::kCompleted : TaskStatus::kCancelled;
    EXPECT_EQ(loser.error().code, ErrorCode::kFailedPrecondition);
    EXPECT_NE(loser.error().message.find(std::string(TaskStatusName(winner))), std::string::npos)
        << loser.error().message;
    for (SessionStore* store : {this->store_.get(), other.get()}) {
      Result<std::optional<TaskRecord>> read = store->GetTask(t->task_id, "o");
      ASSERT_TRUE(read.ok() && read->has_value());
      EXPECT_EQ((*read)->status, winner);
    }
  }
}

// A task's commit (through one store) and its cancel (through another: a tasks/cancel on another
// replica or process) start together, round after round, the cancel a little later each round
// (0 to 10 ms: from before the commit's transaction to after it). Whichever reaches the task's row
// first decides, and the other sees it: the commit is refused and nothing is committed, or the
// cancel is refused naming the version and the task is not cancelled. Never both, never neither.
TYPED_TEST(StoreConcurrencyTest, ATasksCommitAndItsCancelAreDecidedOnce) {
  std::unique_ptr<SessionStore> other = this->Open();
  ASSERT_NE(other, nullptr);
  constexpr int kRounds = 40;
  int committed_rounds = 0;
  for (int round = 0; round < kRounds; ++round) {
    const std::string session = "race" + std::to_string(round);
    NewTask task;
    task.owner = "o";
    task.session_id = session;
    task.tool = "edit_image";
    Result<TaskRecord> t = this->store_->CreateTask(task);
    ASSERT_TRUE(t.ok()) << t.error().message;
    TaskUpdate cancel;
    cancel.task_id = t->task_id;
    cancel.owner = "o";
    cancel.status = TaskStatus::kCancelled;
    cancel.unless_committed = true;
    Result<std::unique_ptr<EditTurn>> turn = this->store_->AcquireTurn(session, {});
    ASSERT_TRUE(turn.ok()) << turn.error().message;
    std::promise<void> go;
    std::shared_future<void> start = go.get_future().share();
    auto committer = std::async(std::launch::async, [&] {
      start.wait();
      return (*turn)->Commit(MakeVersion("bytes" + std::to_string(round)),
                             IdempotencyRecord{TaskIdempotencyKey(t->task_id), "d"});
    });
    auto canceller = std::async(std::launch::async, [&] {
      start.wait();
      std::this_thread::sleep_for(std::chrono::microseconds(250 * round));  // the stagger
      return other->UpdateTask(cancel);
    });
    go.set_value();
    ASSERT_EQ(committer.wait_for(kWait), std::future_status::ready);
    ASSERT_EQ(canceller.wait_for(kWait), std::future_status::ready);
    Result<VersionInfo> commit = committer.get();
    Result<TaskRecord> cancelled = canceller.get();
    turn->reset();
    ASSERT_NE(commit.ok(), cancelled.ok()) << "round " << round;
    Result<std::optional<TaskRecord>> read = this->store_->GetTask(t->task_id, "o");
    ASSERT_TRUE(read.ok() && read->has_value());
    if (commit.ok()) {
      ++committed_rounds;
      EXPECT_EQ(cancelled.error().code, ErrorCode::kConflict) << cancelled.error().message;
      EXPECT_NE(cancelled.error().message.find("already committed version 1"), std::string::npos)
          << cancelled.error().message;
      EXPECT_EQ((*read)->status, TaskStatus::kWorking);  // its run records the completion
      EXPECT_EQ((*read)->version, 1);
      EXPECT_EQ(this->store_->History(session)->size(), 1u);
    } else {
      EXPECT_EQ(commit.error().code, ErrorCode::kCancelled) << commit.error().message;
      EXPECT_EQ((*read)->status, TaskStatus::kCancelled);
      EXPECT_FALSE((*read)->version.has_value());
      EXPECT_FALSE(this->store_->SessionExists(session));  // nothing was committed
      Result<std::optional<AppliedKey>> key =
          this->store_->FindAppliedKey(session, TaskIdempotencyKey(t->task_id));
      ASSERT_TRUE(key.ok());
      EXPECT_FALSE(key->has_value());
    }
  }
  // Which one wins is the race's; both outcomes are expected over the rounds, but neither is
  // required (a fast machine may let one side win every time).
  std::cout << TypeParam::kName << ": the commit won " << committed_rounds << " of " << kRounds
            << " rounds\n";
}

// Eight calls at once, four through each of two stores on one backing (processes or replicas),
// against budgets with room for three: exactly three holds are kept, whatever the interleaving,
// for a per-session and for a per-day budget alike.
TYPED_TEST(StoreConcurrencyTest, EightHoldsAgainstABudgetWithRoomForThreeKeepExactlyThree) {
  std::unique_ptr<SessionStore> other = this->Open();
  ASSERT_NE(other, nullptr);
  for (const SpendBudgets budgets :
       {SpendBudgets{.per_session_usd = 0.30}, SpendBudgets{.per_day_usd = 0.30}}) {
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            this->clock_.WallNow().time_since_epoch())
                            .count();
    const std::string session = budgets.per_day_usd > 0 ? "daily" : "per-session";
    std::atomic<int> kept{0}, refused{0}, failed{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i) {
      threads.emplace_back([&, i] {
        SpendHold hold;
        // The daily budget counts every session: each call its own.
        hold.session_id = budgets.per_day_usd > 0 ? session + std::to_string(i) : session;
        hold.model = "m";
        hold.estimate_usd = 0.10;
        hold.now_ms = now;
        hold.expires_ms = now + 600'000;
        Result<int64_t> id = (i % 2 == 0 ? *this->store_ : *other).ReserveSpend(hold, budgets);
        if (id.ok()) {
          ++kept;
        } else if (id.error().code == ErrorCode::kResourceExhausted) {
          ++refused;
        } else {
          ++failed;
          ADD_FAILURE() << id.error().message;
        }
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(kept.load(), 3) << session;
    EXPECT_EQ(refused.load(), 5) << session;
    EXPECT_EQ(failed.load(), 0) << session;
    // Let the day's holds go before the next budget: a new day.
    this->clock_.Advance(std::chrono::hours(24));
  }
}

}  // namespace
}  // namespace imgmcp::session
