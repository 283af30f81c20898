// A real PostgreSQL for the session tests: tests/pg/pg_cluster.py started once per test process
// (`serve`), which runs initdb and pg_ctl in a temp dir and removes it all when our end of its
// stdin closes — at exit, or when this process dies any other way.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include "common/json.h"
#include "common/result.h"
#include "session/postgres/pg_connection.h"

extern char** environ;

namespace imgmcp::session::testing {

class PgTestCluster {
 public:
  // The process-wide cluster, started on first use; nullptr (with the reason) if it cannot start.
  static PgTestCluster* Get(std::string* why) {
    static std::once_flag once;
    static PgTestCluster* cluster = nullptr;
    static std::string failure;
    std::call_once(once, [] {
      auto c = std::unique_ptr<PgTestCluster>(new PgTestCluster());
      failure = c->Start();
      if (failure.empty()) cluster = c.release();  // lives until exit; its child cleans up then
    });
    if (cluster == nullptr && why != nullptr) *why = failure;
    return cluster;
  }

  const std::string& admin_url() const { return admin_url_; }
  std::string Url(const std::string& database) const { return base_url_ + "/" + database; }

  // A fresh database; Drop removes it (and ends its sessions).
  Result<std::string> CreateDatabase() {
    const std::string name = "t" + std::to_string(::getpid()) + "_" + std::to_string(++counter_);
    Result<std::unique_ptr<postgres::PgConnection>> admin =
        postgres::PgConnection::Connect(admin_url_, "test cluster");
    if (!admin.ok()) return admin.error();
    if (Status st = (*admin)->Run("CREATE DATABASE " + name, "creating a test database");
        !st.ok()) {
      return st.error();
    }
    return name;
  }
  void Drop(const std::string& database) {
    Result<std::unique_ptr<postgres::PgConnection>> admin =
        postgres::PgConnection::Connect(admin_url_, "test cluster");
    if (admin.ok()) {
      (void)(*admin)->Run("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)",
                          "dropping a test database");
    }
  }
  const Json& info() const { return info_; }

 private:
  PgTestCluster() = default;

  std::string Start() {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) return "pipe failed";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    const char* argv[] = {IMGMCP_PYTHON, IMGMCP_PG_CLUSTER_SCRIPT, "serve", nullptr};
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, IMGMCP_PYTHON, &actions, nullptr,
                               const_cast<char* const*>(argv), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(in[0]);
    ::close(out[1]);
    if (rc != 0) return "cannot run " IMGMCP_PG_CLUSTER_SCRIPT;
    stdin_fd_ = in[1];  // kept open for the life of this process: closing it stops the cluster
    std::string line;
    char c = 0;
    while (::read(out[0], &c, 1) == 1 && c != '\n') line += c;
    ::close(out[0]);
    if (line.empty()) {
      ::close(stdin_fd_);
      int status = 0;
      ::waitpid(pid, &status, 0);
      return "the test PostgreSQL cluster did not start (see pg_cluster's stderr above)";
    }
    info_ = Json::parse(line, nullptr, false);
    if (info_.is_discarded() || !info_.contains("admin_url")) return "bad pg_cluster output";
    admin_url_ = info_["admin_url"].get<std::string>();
    base_url_ = admin_url_.substr(0, admin_url_.rfind('/'));
    return "";
  }

  int stdin_fd_ = -1;
  Json info_;
  std::string admin_url_;
  std::string base_url_;
  std::atomic<int> counter_{0};
};

}  // namespace imgmcp::session::testing
