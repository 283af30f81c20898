// common/posix_io.h and common/unique_fd.h on real descriptors: pipes whose writer or reader is
// interrupted by a signal while blocked (EINTR, a short write), a file size limit that cuts a
// write short, and atomic writes in a temporary directory.
#include "common/posix_io.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "common/unique_fd.h"
#include "tests/unit/temp_dir.h"

namespace imgmcp {
namespace {

namespace fs = std::filesystem;
using test_util::TempDir;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

bool NoTempFiles(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind(".tmp-", 0) == 0) return false;
  }
  return true;
}

// --- UniqueFd -----------------------------------------------------------------------------------

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

TEST(UniqueFdTest, ClosesWhenItGoesAndMovesOwnership) {
  int raw[2];
  ASSERT_EQ(::pipe2(raw, O_CLOEXEC), 0);
  {
    UniqueFd read_end(raw[0]);
    UniqueFd write_end(raw[1]);
    UniqueFd moved(std::move(read_end));
    EXPECT_FALSE(read_end.valid());  // NOLINT(bugprone-use-after-move): the moved-from state
    EXPECT_EQ(moved.get(), raw[0]);
    write_end = std::move(moved);  // closes the write end, takes the read end
    EXPECT_FALSE(IsOpen(raw[1]));
    EXPECT_TRUE(IsOpen(raw[0]));
  }
  EXPECT_FALSE(IsOpen(raw[0]));
}

TEST(UniqueFdTest, ReleaseGivesUpAndCloseReportsErrors) {
  int raw[2];
  ASSERT_EQ(::pipe2(raw, O_CLOEXEC), 0);
  UniqueFd read_end(raw[0]);
  {
    UniqueFd write_end(raw[1]);
    EXPECT_EQ(write_end.Release(), raw[1]);
  }
  EXPECT_TRUE(IsOpen(raw[1]));  // released, not closed
  UniqueFd again(raw[1]);
  EXPECT_EQ(again.Close(), 0);
  EXPECT_FALSE(again.valid());
  EXPECT_EQ(again.Close(), 0);  // nothing held: nothing to close
  UniqueFd stale(raw[1]);       // already closed: close(2) says EBADF
  EXPECT_EQ(stale.Close(), EBADF);
  read_end.Reset();
  EXPECT_FALSE(IsOpen(raw[0]));
}

// --- WriteAll and ReadAll under signals ---------------------------------------------------------

std::atomic<int> signals_handled{0};
void CountSignal(int) { signals_handled.fetch_add(1); }

// SIGUSR1 handled without SA_RESTART, so a blocked read or write it interrupts returns early
// (EINTR, or the bytes moved so far). Restores the old action when it goes.
class InterruptingSignal {
 public:
  InterruptingSignal() {
    struct sigaction action {};
    action.sa_handler = CountSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;
    ::sigaction(SIGUSR1, &action, &old_);
    signals_handled = 0;
  }
  ~InterruptingSignal() { ::sigaction(SIGUSR1, &old_, nullptr); }

 private:
  struct sigaction old_ {};
};

// True once thread `tid` is blocked in system call `nr`, as /proc shows it; false after 10 s.
bool WaitUntilBlockedIn(pid_t tid, long nr) {
  const std::string path = "/proc/self/task/" + std::to_string(tid) + "/syscall";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path);
    long current = -2;
    if (in >> current && current == nr) return true;
    std::this_thread::yield();
  }
  return false;
}

// Interrupts `thread` once it is blocked in `nr` and waits for its handler to have run; false
// when it never blocked there.
bool Interrupt(pthread_t thread, pid_t tid, long nr) {
  const int before = signals_handled.load();
  if (!WaitUntilBlockedIn(tid, nr) || ::pthread_kill(thread, SIGUSR1) != 0) return false;
  while (signals_handled.load() == before) std::this_thread::yield();
  return true;
}

int Pending(int read_fd) {
  int n = 0;
  ::ioctl(read_fd, FIONREAD, &n);
  return n;
}

TEST(WriteAllTest, CarriesOnAfterAShortWriteAndAfterEintr) {
  InterruptingSignal interrupting;
  int raw[2];
  ASSERT_EQ(::pipe2(raw, O_CLOEXEC), 0);
  UniqueFd read_end(raw[0]);
  UniqueFd write_end(raw[1]);
  const int capacity = ::fcntl(write_end.get(), F_SETPIPE_SZ, 4096);
  ASSERT_GT(capacity, 0);
  std::string payload(static_cast<size_t>(capacity) * 3, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>('a' + i % 26);

  std::atomic<pid_t> writer_tid{0};
  int result = -1;
  std::thread writer([&] {
    writer_tid = static_cast<pid_t>(::syscall(SYS_gettid));
    result = WriteAll(write_end.get(), payload);
    write_end.Reset();  // the reader below sees the end, however far the write got
  });
  while (writer_tid.load() == 0) std::this_thread::yield();
  // The first write fills the pipe and blocks: a signal now makes it return the bytes written
  // (a short write). The next write finds the pipe full: a signal makes it fail with EINTR.
  EXPECT_TRUE(Interrupt(writer.native_handle(), writer_tid, SYS_write));
  EXPECT_EQ(Pending(read_end.get()), capacity);
  EXPECT_TRUE(Interrupt(writer.native_handle(), writer_tid, SYS_write));
  std::string got;
  EXPECT_EQ(ReadAll(read_end.get(), &got), 0);
  writer.join();
  EXPECT_EQ(result, 0);
  EXPECT_EQ(signals_handled.load(), 2);
  EXPECT_EQ(got.size(), payload.size());
  EXPECT_TRUE(got == payload);
}

TEST(ReadAllTest, CarriesOnAfterEintrAndStopsAtEndOfFile) {
  InterruptingSignal interrupting;
  int raw[2];
  ASSERT_EQ(::pipe2(raw, O_CLOEXEC), 0);
  UniqueFd read_end(raw[0]);
  UniqueFd write_end(raw[1]);
  std::atomic<pid_t> reader_tid{0};
  std::string got = "kept:";
  int result = -1;
  std::thread reader([&] {
    reader_tid = static_cast<pid_t>(::syscall(SYS_gettid));
    result = ReadAll(read_end.get(), &got);
  });
  while (reader_tid.load() == 0) std::this_thread::yield();
  // Nothing to read yet: the read fails with EINTR.
  EXPECT_TRUE(Interrupt(reader.native_handle(), reader_tid, SYS_read));
  EXPECT_EQ(WriteAll(write_end.get(), "first "), 0);
  Interrupt(reader.native_handle(), reader_tid, SYS_read);  // may find "first " read already
  EXPECT_EQ(WriteAll(write_end.get(), "second"), 0);
  write_end.Reset();  // end of file
  reader.join();
  EXPECT_EQ(result, 0);
  EXPECT_EQ(got, "kept:first second");
}

TEST(ReadAllTest, StopsAtMaxAndFillsReservedSpaceFirst) {
  TempDir tmp;
  const std::string bytes(200000, 'x');
  ASSERT_TRUE(WriteFileAtomically(tmp.path(), "f", bytes).ok());
  UniqueFd fd(::open((tmp.path() / "f").c_str(), O_RDONLY | O_CLOEXEC));
  std::string some;
  ASSERT_EQ(ReadAll(fd.get(), &some, 70000), 0);
  EXPECT_EQ(some.size(), 70000u);
  std::string rest;
  rest.reserve(bytes.size());
  const char* const buffer = rest.data();
  ASSERT_EQ(ReadAll(fd.get(), &rest), 0);
  EXPECT_EQ(rest.size(), bytes.size() - 70000);
  EXPECT_EQ(static_cast<const void*>(rest.data()), static_cast<const void*>(buffer));  // in place
  EXPECT_EQ(ReadAll(-1, &rest), EBADF);
}

// RLIMIT_FSIZE cuts a write at the limit (a short write); the next write fails with EFBIG. Run
// in a child process (below), so the limit and the ignored SIGXFSZ stay there.
void WriteBeyondTheFileSizeLimit(const fs::path& path) {
  struct rlimit limit {};
  limit.rlim_cur = limit.rlim_max = 10000;
  ::signal(SIGXFSZ, SIG_IGN);
  if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(2);
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  const int err = WriteAll(fd.get(), std::string(25000, 'z'));
  struct stat st {};
  ::fstat(fd.get(), &st);
  _exit(err == EFBIG && st.st_size == 10000 ? 0 : 1);
}

TEST(WriteAllTest, ReportsTheErrorAfterAShortWrite) {
  TempDir tmp;
  EXPECT_EXIT(WriteBeyondTheFileSizeLimit(tmp.path() / "limited"), ::testing::ExitedWithCode(0),
              "");
}

// --- errors -------------------------------------------------------------------------------------

TEST(ErrnoErrorTest, NamesTheStepThePathAndTheCause) {
  const Error e = ErrnoError("cannot open", "/data/x", ENOENT);
  EXPECT_EQ(e.code, ErrorCode::kNotFound);
  EXPECT_EQ(e.message, "cannot open /data/x: No such file or directory");
  EXPECT_EQ(ErrnoCode(EACCES), ErrorCode::kPermissionDenied);
  EXPECT_EQ(ErrnoCode(EPERM), ErrorCode::kPermissionDenied);
  EXPECT_EQ(ErrnoCode(EROFS), ErrorCode::kPermissionDenied);
  EXPECT_EQ(ErrnoCode(ENOSPC), ErrorCode::kResourceExhausted);
  EXPECT_EQ(ErrnoCode(EDQUOT), ErrorCode::kResourceExhausted);
  EXPECT_EQ(ErrnoCode(EEXIST), ErrorCode::kConflict);
  EXPECT_EQ(ErrnoCode(EIO), ErrorCode::kInternal);
}

// --- files --------------------------------------------------------------------------------------

TEST(WriteFileAtomicallyTest, WritesTheWholeFileWithItsModeAndLeavesNoTemp) {
  TempDir tmp;
  const mode_t old_mask = ::umask(022);
  ASSERT_TRUE(WriteFileAtomically(tmp.path(), "a", "first").ok());
  ASSERT_TRUE(WriteFileAtomically(tmp.path(), "a", "second", {.mode = 0644}).ok());
  ::umask(old_mask);
  EXPECT_EQ(Slurp(tmp.path() / "a"), "second");
  struct stat st {};
  ASSERT_EQ(::stat((tmp.path() / "a").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_TRUE(NoTempFiles(tmp.path()));
  const Result<std::string> back = ReadWholeFile(tmp.path() / "a");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, "second");
}

TEST(WriteFileAtomicallyTest, BigFilesWithDirectIoOrWithout) {
  TempDir tmp;
  std::string bytes(1'000'003, '\0');  // not a multiple of any block size
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
  for (const bool direct : {true, false}) {
    ASSERT_TRUE(WriteFileAtomically(tmp.path(), "big", bytes, {.direct_io = direct}).ok());
    const Result<std::string> back = ReadWholeFile(tmp.path() / "big");
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->size(), bytes.size());
    EXPECT_TRUE(*back == bytes);
  }
  ASSERT_TRUE(WriteFileAtomically(tmp.path(), "cache", bytes, {.sync = Sync::kNone}).ok());
  EXPECT_TRUE(*ReadWholeFile(tmp.path() / "cache") == bytes);
}

TEST(WriteFileAtomicallyTest, NeverReplacingKeepsTheExistingFile) {
  TempDir tmp;
  ASSERT_TRUE(WriteFileAtomically(tmp.path(), "kept", "old").ok());
  const Status st = WriteFileAtomically(tmp.path(), "kept", "new",
                                        {.replace = false, .conflict_note = "; choose another"});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kConflict);
  EXPECT_EQ(st.error().message, (tmp.path() / "kept").string() + " already exists; choose another");
  EXPECT_EQ(Slurp(tmp.path() / "kept"), "old");
  EXPECT_TRUE(NoTempFiles(tmp.path()));
  EXPECT_TRUE(WriteFileAtomically(tmp.path(), "fresh", "new", {.replace = false}).ok());
}

TEST(WriteFileAtomicallyTest, AFailedWriteLeavesNothing) {
  TempDir tmp;
  ASSERT_TRUE(WriteFileAtomically(tmp.path(), "f", "old").ok());
  const Status st = WriteFileAtomically(tmp.path(), "f", "new", {.fail_writes_with = ENOSPC});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(st.error().message.rfind("cannot write " + tmp.path().string() + "/.tmp-", 0), 0u)
      << st.error().message;
  EXPECT_EQ(Slurp(tmp.path() / "f"), "old");
  EXPECT_TRUE(NoTempFiles(tmp.path()));
}

TEST(WriteFileAtomicallyTest, AMissingDirectoryIsNotFound) {
  TempDir tmp;
  const Status st = WriteFileAtomically(tmp.path() / "missing", "f", "x");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kNotFound);
  EXPECT_NE(st.error().message.find("missing"), std::string::npos);
  const Result<std::string> r = ReadWholeFile(tmp.path() / "nope");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(SyncDir(tmp.path() / "missing").ok());
  EXPECT_TRUE(SyncDir(tmp.path()).ok());
}

TEST(MoveWithoutReplacingTest, BothWaysKeepTheExistingFile) {
  TempDir tmp;
  const UniqueFd dir(::open(tmp.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(dir.valid());
  for (NoReplaceMethod method : {NoReplaceMethod::kRenameNoReplace, NoReplaceMethod::kLink}) {
    ASSERT_TRUE(WriteFileAtomically(tmp.path(), "target", "kept").ok());
    ASSERT_TRUE(WriteFileAtomically(tmp.path(), "temp", "new").ok());
    EXPECT_EQ(MoveWithoutReplacing(dir.get(), "temp", "target", method), EEXIST);
    EXPECT_EQ(Slurp(tmp.path() / "target"), "kept");
    fs::remove(tmp.path() / "target");
    EXPECT_EQ(MoveWithoutReplacing(dir.get(), "temp", "target", method), 0);
    EXPECT_EQ(Slurp(tmp.path() / "target"), "new");
    EXPECT_FALSE(fs::exists(tmp.path() / "temp"));
  }
}

}  // namespace
}  // namespace imgmcp
