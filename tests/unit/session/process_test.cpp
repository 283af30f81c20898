// Several processes on one data dir (ADK starts a new imgmcp per tool call), SIGKILL at random
// points of commits, and SIGKILL of a process in the middle of a task (a restart: the next
// process finds the task failed, or completed from the version it had committed). Children are
// forked before they start any thread and leave with _exit.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "common/sha256.h"
#include "session/sqlite/sqlite_session_store.h"
#include "test_util.h"

namespace imgmcp::session {
namespace {

using testing::TempDir;

StoreOptions KeepAll(const std::filesystem::path& dir) {
  StoreOptions o;
  o.data_dir = dir;
  o.max_versions_per_session = 0;
  return o;
}

// Child: `threads` threads × `edits` edits on `session_id`. Each reads the current version in its
// turn and commits the next; a version other than read+1 is a lost update (exit code 3).
int ChildEdits(const std::filesystem::path& dir, const std::string& session_id, int child,
               int threads, int edits) {
  SystemClock clock;
  auto store = sqlite::SqliteSessionStore::Open(KeepAll(dir), clock);
  if (!store.ok()) {
    std::fprintf(stderr, "child %d: open: %s\n", child, store.error().message.c_str());
    return 2;
  }
  std::atomic<int> status{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int s = 0; s < edits; ++s) {
        auto turn = (*store)->AcquireTurn(session_id, {});
        if (!turn.ok()) {
          std::fprintf(stderr, "child %d: turn: %s\n", child, turn.error().message.c_str());
          status = 2;
          return;
        }
        const auto cur = (*turn)->Current();
        const int64_t n = cur ? cur->version : 0;
        NewVersion nv;
        nv.prompt = "p" + std::to_string(child) + "-t" + std::to_string(t) + "-s" +
                    std::to_string(s) + " read v" + std::to_string(n);
        nv.bytes = nv.prompt;
        nv.mime_type = "image/png";
        nv.file_extension = ".png";
        nv.operation = "edit";
        if (n > 0) nv.parent = n;
        auto v = (*turn)->Commit(nv);
        if (!v.ok()) {
          std::fprintf(stderr, "child %d: commit: %s\n", child, v.error().message.c_str());
          status = 2;
          return;
        }
        if (v->version != n + 1) status = 3;
      }
    });
  }
  for (auto& th : pool) th.join();
  return status.load();
}

TEST(ProcessTest, SeveralProcessesShareOneSessionWithoutLosingUpdates) {
  constexpr int kChildren = 4, kThreads = 2, kEdits = 40;
  TempDir tmp;
  std::vector<pid_t> pids;
  for (int c = 0; c < kChildren; ++c) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ::_exit(ChildEdits(tmp.path(), "shared", c, kThreads, kEdits));
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "child failed (3 = lost update)";
  }

  SystemClock clock;
  auto store = sqlite::SqliteSessionStore::Open(KeepAll(tmp.path()), clock);
  ASSERT_TRUE(store.ok());
  auto history = (*store)->History("shared");
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), static_cast<size_t>(kChildren * kThreads * kEdits));
  std::set<std::string> seen;
  std::map<std::string, int> last_seq;  // per child+thread: edits are sequential
  for (size_t i = 0; i < history->size(); ++i) {
    const VersionInfo& v = (*history)[i];
    ASSERT_EQ(v.version, static_cast<int64_t>(i) + 1);
    if (i > 0) {
      EXPECT_EQ(v.parent, v.version - 1);
    }
    const std::string name = v.prompt.substr(0, v.prompt.find(' '));
    EXPECT_EQ(v.prompt, name + " read v" + std::to_string(v.version - 1));
    EXPECT_TRUE(seen.insert(name).second) << name;
    const std::string who = name.substr(0, name.rfind("-s"));
    const int seq = std::stoi(name.substr(name.rfind("-s") + 2));
    auto [it, fresh] = last_seq.emplace(who, -1);
    EXPECT_EQ(seq, it->second + 1) << who;
    it->second = seq;
    EXPECT_EQ(*(*store)->ReadImage(v), v.prompt);
  }
}

// What a child acknowledges through the pipe after Commit returned.
struct Ack {
  int64_t version;
  char sha256[64];
};
static_assert(sizeof(Ack) < PIPE_BUF);

[[noreturn]] void CrashChild(const std::filesystem::path& dir, int fd, int iteration) {
  SystemClock clock;
  auto store = sqlite::SqliteSessionStore::Open(KeepAll(dir), clock);
  if (!store.ok()) ::_exit(2);
  for (int i = 0;; ++i) {
    auto turn = (*store)->AcquireTurn("crash", {});
    if (!turn.ok()) ::_exit(2);
    const auto cur = (*turn)->Current();
    NewVersion nv;
    // 20–150 KB so the kill often lands inside a write or an fsync.
    nv.bytes.assign(20000 + (iteration * 7919 + i * 104729) % 130000,
                    static_cast<char>('a' + (i % 26)));
    nv.bytes += std::to_string(iteration) + ":" + std::to_string(i);
    nv.mime_type = "image/png";
    nv.file_extension = ".png";
    nv.operation = "edit";
    nv.prompt = "crash " + std::to_string(iteration) + ":" + std::to_string(i);
    if (cur) nv.parent = cur->version;
    auto v = (*turn)->Commit(nv);
    if (!v.ok()) ::_exit(2);
    Ack ack{};
    ack.version = v->version;
    std::memcpy(ack.sha256, v->sha256.data(), sizeof ack.sha256);
    if (::write(fd, &ack, sizeof ack) != static_cast<ssize_t>(sizeof ack)) ::_exit(2);
  }
}

// Reads one Ack; false at EOF.
bool ReadAck(int fd, Ack* ack) {
  size_t got = 0;
  auto* p = reinterpret_cast<char*>(ack);
  while (got < sizeof *ack) {
    const ssize_t n = ::read(fd, p + got, sizeof *ack - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

TEST(ProcessTest, SigkillAtRandomPointsNeverLosesAnAcknowledgedVersion) {
  constexpr int kIterations = 30;
  TempDir tmp;
  std::mt19937 rng(std::random_device{}());
  std::map<int64_t, std::string> acked;  // version → sha256
  for (int it = 0; it < kIterations; ++it) {
    SCOPED_TRACE("iteration " + std::to_string(it));
    int fds[2];
    ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      CrashChild(tmp.path(), fds[1], it);
    }
    ::close(fds[1]);
    // Let it acknowledge a few versions, then kill it somewhere in the middle of the next ones.
    const int wait_acks = std::uniform_int_distribution<int>(1, 4)(rng);
    Ack ack{};
    for (int i = 0; i < wait_acks && ReadAck(fds[0], &ack); ++i) {
      acked[ack.version] = std::string(ack.sha256, sizeof ack.sha256);
    }
    // A random delay only to vary where the kill lands; nothing waits on it.
    std::this_thread::sleep_for(
        std::chrono::microseconds(std::uniform_int_distribution<int>(0, 3000)(rng)));
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited on its own with " << WEXITSTATUS(status);
    while (ReadAck(fds[0], &ack)) acked[ack.version] = std::string(ack.sha256, sizeof ack.sha256);
    ::close(fds[0]);

    // Reopen (this sweeps) and check the state.
    SystemClock clock;
    auto store = sqlite::SqliteSessionStore::Open(KeepAll(tmp.path()), clock);
    ASSERT_TRUE(store.ok()) << store.error().message;
    auto history = (*store)->History("crash");
    ASSERT_TRUE(history.ok());
    std::set<std::string> files_with_rows;
    int64_t expected = 1;
    for (const VersionInfo& v : *history) {
      ASSERT_EQ(v.version, expected++) << "versions are not contiguous";
      auto bytes = (*store)->ReadImage(v);
      ASSERT_TRUE(bytes.ok()) << "torn: row without intact file: " << bytes.error().message;
      EXPECT_EQ(Sha256Hex(*bytes), v.sha256);
      files_with_rows.insert(v.path.filename().string());
    }
    for (const auto& [version, sha] : acked) {
      auto v = (*store)->GetVersion("crash", version);
      ASSERT_TRUE(v.ok()) << "acknowledged version " << version << " lost";
      EXPECT_EQ(v->sha256, sha);
      EXPECT_EQ(Sha256Hex(*(*store)->ReadImage(*v)), sha);
    }
    for (const auto& e : std::filesystem::directory_iterator(tmp.path() / "images" / "crash")) {
      const std::string name = e.path().filename().string();
      EXPECT_TRUE(files_with_rows.count(name)) << "file without row after sweep: " << name;
    }
  }
  EXPECT_GE(acked.size(), static_cast<size_t>(kIterations));
}

// Child: creates a task on session "t" (committing its version first when `commit`), reports the
// task id through `fd`, then waits to be killed.
[[noreturn]] void TaskChild(const std::filesystem::path& dir, int fd, bool commit) {
  SystemClock clock;
  auto store = sqlite::SqliteSessionStore::Open(KeepAll(dir), clock);
  if (!store.ok()) ::_exit(2);
  NewTask task;
  task.owner = "o";
  task.session_id = "t";
  task.tool = "edit_image";
  auto created = (*store)->CreateTask(task);
  if (!created.ok()) ::_exit(2);
  if (commit) {
    auto turn = (*store)->AcquireTurn("t", {});
    if (!turn.ok()) ::_exit(2);
    NewVersion nv;
    nv.bytes = "task bytes";
    nv.mime_type = "image/png";
    nv.file_extension = ".png";
    nv.operation = "generate";
    IdempotencyRecord key{TaskIdempotencyKey(created->task_id), "d"};
    if (!(*turn)->Commit(nv, key).ok()) ::_exit(2);
  }
  if (::write(fd, created->task_id.data(), 32) != 32) ::_exit(2);
  while (true) ::pause();
}

// Runs TaskChild, kills it with SIGKILL once its task exists, and returns the task as a new
// process (a new store on the data dir) reads it then. Before the kill the task is working: its
// process lives.
std::optional<TaskRecord> KillInTheMiddleOfATask(const std::filesystem::path& dir, bool commit) {
  int fds[2];
  EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  const pid_t pid = ::fork();
  EXPECT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    TaskChild(dir, fds[1], commit);
  }
  ::close(fds[1]);
  std::string id(32, '\0');
  const bool reported = ::read(fds[0], id.data(), 32) == 32;
  ::close(fds[0]);
  SystemClock clock;
  std::optional<TaskRecord> before;
  if (reported) {
    auto watcher = sqlite::SqliteSessionStore::Open(KeepAll(dir), clock);
    EXPECT_TRUE(watcher.ok());
    if (watcher.ok()) before = *(*watcher)->GetTask(id, "o");
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(reported) << "the child failed before creating its task";
  EXPECT_TRUE(before.has_value() && before->status == TaskStatus::kWorking);
  auto restarted = sqlite::SqliteSessionStore::Open(KeepAll(dir), clock);
  EXPECT_TRUE(restarted.ok());
  if (!reported || !restarted.ok()) return std::nullopt;
  auto after = (*restarted)->GetTask(id, "o");
  EXPECT_TRUE(after.ok());
  return after.ok() ? *after : std::nullopt;
}

TEST(ProcessTest, ATaskWhoseProcessWasKilledIsFailedOrCompletedFromItsVersion) {
  TempDir tmp;
  std::optional<TaskRecord> failed = KillInTheMiddleOfATask(tmp.path(), false);
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->status, TaskStatus::kFailed);
  EXPECT_NE(failed->error_json.find("process running this task stopped"), std::string::npos);

  std::optional<TaskRecord> completed = KillInTheMiddleOfATask(tmp.path(), true);
  ASSERT_TRUE(completed.has_value());
  EXPECT_EQ(completed->status, TaskStatus::kCompleted);
  EXPECT_EQ(completed->version, 1);

  // The dead processes' runner lock files were removed when the next store opened.
  int runner_files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(tmp.path() / "locks")) {
    if (entry.path().filename().string().rfind(".runner-", 0) == 0) ++runner_files;
  }
  EXPECT_EQ(runner_files, 0);
}

}  // namespace
}  // namespace imgmcp::session
