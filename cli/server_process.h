// One imgmcp child process spoken to over pipes: stdin for requests, stdout for responses (one
// JSON message per line); its stderr is inherited so the user sees the server's own messages.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"

namespace imgmcp::cli {

class ServerProcess {
 public:
  using Deadline = std::chrono::steady_clock::time_point;

  // Starts `program` (searched in PATH when it has no '/') with `args`.
  static Result<std::unique_ptr<ServerProcess>> Start(const std::string& program,
                                                      const std::vector<std::string>& args);
  ~ServerProcess();  // closes the pipes; kills the child if it is still running
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  Status WriteLine(const std::string& line);
  // The next stdout line (without "\n" or "\r\n"); kDeadlineExceeded or kUnavailable (EOF).
  Result<std::string> ReadLine(Deadline deadline);
  void CloseStdin();
  // Waits up to `grace` for the child to exit after stdin was closed, then kills it.
  // Returns the exit status as shell would report it (128+signal when killed).
  int Finish(std::chrono::milliseconds grace);

 private:
  ServerProcess(pid_t pid, UniqueFd stdin_fd, UniqueFd stdout_fd)
      : pid_(pid), stdin_fd_(std::move(stdin_fd)), stdout_fd_(std::move(stdout_fd)) {}

  pid_t pid_;
  UniqueFd stdin_fd_;
  UniqueFd stdout_fd_;
  bool reaped_ = false;
  int exit_status_ = 0;
  std::string buffer_;  // bytes read from stdout but not yet returned as a line
};

}  // namespace imgmcp::cli
