#include "cli/server_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "common/posix_io.h"

extern char** environ;

namespace imgmcp::cli {
namespace {

Error SysError(const std::string& what, int err) {
  return Error(ErrorCode::kUnavailable, what + ": " + ErrnoText(err));
}

}  // namespace

Result<std::unique_ptr<ServerProcess>> ServerProcess::Start(const std::string& program,
                                                            const std::vector<std::string>& args) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return SysError("pipe", errno);
  UniqueFd child_stdin(fds[0]);
  UniqueFd to_child(fds[1]);
  if (pipe2(fds, O_CLOEXEC) != 0) return SysError("pipe", errno);
  UniqueFd from_child(fds[0]);
  UniqueFd child_stdout(fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child_stdin.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, child_stdout.get(), STDOUT_FILENO);

  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  pid_t pid = 0;
  int rc = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return SysError("cannot start " + program, rc);
  return std::unique_ptr<ServerProcess>(
      new ServerProcess(pid, std::move(to_child), std::move(from_child)));
}

ServerProcess::~ServerProcess() {
  CloseStdin();
  stdout_fd_.Reset();
  if (!reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

Status ServerProcess::WriteLine(const std::string& line) {
  if (!stdin_fd_.valid()) return Error(ErrorCode::kUnavailable, "server stdin is closed");
  if (const int err = WriteAll(stdin_fd_.get(), line + "\n"); err != 0) {
    return SysError("writing to the server", err);
  }
  return Status::Ok();
}

Result<std::string> ServerProcess::ReadLine(Deadline deadline) {
  while (true) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return Error(ErrorCode::kDeadlineExceeded, "no answer from the server in time");
    }
    pollfd pfd{stdout_fd_.get(), POLLIN, 0};
    int ready = poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 60'000)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      return SysError("waiting for the server", errno);
    }
    if (ready == 0) continue;
    char chunk[65536];
    ssize_t n = read(stdout_fd_.get(), chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return SysError("reading from the server", errno);
    }
    if (n == 0) return Error(ErrorCode::kUnavailable, "the server closed its output");
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

void ServerProcess::CloseStdin() { stdin_fd_.Reset(); }

namespace {

// Waits until `pid` has exited or `until` passes, woken by the kernel through a pidfd (Linux 5.3+);
// where there is none, checks every 10 ms. True once the child can be reaped without blocking.
bool AwaitExit(pid_t pid, std::chrono::steady_clock::time_point until) {
  const UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    if (!pidfd.valid()) {
      siginfo_t info{};
      if (waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) {
        return true;
      }
      std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(10)));
      continue;
    }
    pollfd p{pidfd.get(), POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready == 1) return true;
    if (ready < 0 && errno != EINTR) break;
  }
  return false;
}

}  // namespace

int ServerProcess::Finish(std::chrono::milliseconds grace) {
  CloseStdin();
  if (reaped_) return exit_status_;
  if (!AwaitExit(pid_, std::chrono::steady_clock::now() + grace)) kill(pid_, SIGKILL);
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  reaped_ = true;
  if (r != pid_) return exit_status_ = 2;
  exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return exit_status_;
}

}  // namespace imgmcp::cli
