// A thin RAII layer over libpq: one connection, its results, a bounded pool. The only code (with
// the rest of session/postgres) that includes libpq (docs/design.md §1).
//
// Errors are Result/Status: a lost or refused connection, a server shutting down, a deadlock or a
// serialization failure are kUnavailable ("retrying may help"), a constraint violation kConflict,
// anything else kInternal; the message names the server (host:port/database — never the password
// or the full connection string) and what was being done. A PgConnection is not thread-safe (one
// thread at a time: the pool hands it out).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/thread_annotations.h"
#include "metrics/metrics.h"

struct pg_conn;
struct pg_result;

namespace imgmcp::session::postgres {

// One query parameter: text (the server converts it), NULL, or raw bytes for a bytea parameter
// (sent in binary, not copied: the caller keeps them alive for the call).
struct PgParam {
  static PgParam Text(std::string value) { return PgParam{std::move(value), {}, false, false}; }
  static PgParam Int(int64_t value) { return Text(std::to_string(value)); }
  static PgParam OptionalInt(const std::optional<int64_t>& value) {
    return value.has_value() ? Int(*value) : Null();
  }
  static PgParam Null() { return PgParam{{}, {}, true, false}; }
  static PgParam Bytes(std::string_view bytes) { return PgParam{{}, bytes, false, true}; }

  std::string text;
  std::string_view bytes;
  bool is_null = false;
  bool binary = false;
};

class PgResult {
 public:
  PgResult(pg_result* result, bool binary) : result_(result), binary_(binary) {}
  PgResult(PgResult&& other) noexcept : result_(other.result_), binary_(other.binary_) {
    other.result_ = nullptr;
  }
  PgResult& operator=(PgResult&&) = delete;
  ~PgResult();

  int Rows() const;
  bool IsNull(int row, int col) const;
  // Text of a column of a text-format result (raw bytes of a binary-format result).
  std::string Text(int row, int col) const;
  // A bigint/integer column of a text-format result (0 when NULL or not a number).
  int64_t Int(int row, int col) const;
  std::optional<int64_t> OptionalInt(int row, int col) const;
  bool Bool(int row, int col) const;  // a boolean column of a text-format result

 private:
  pg_result* result_;
  bool binary_;
};

// A notification received on a LISTENing connection.
struct PgNotification {
  std::string channel;
  std::string payload;
  int sender_pid = 0;
};

class PgConnection {
 public:
  // Connects with `conninfo` (a postgresql:// URL or key=value string). `label` (host:port/db)
  // names the server in every error. The session runs with synchronous_commit=on.
  static Result<std::unique_ptr<PgConnection>> Connect(const std::string& conninfo,
                                                       const std::string& label);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // One statement with $1.. parameters; rows in text format, or in binary (raw bytes for bytea
  // and text columns) when `binary_result`. `what` says what it is for, in errors.
  Result<PgResult> Exec(std::string_view sql, const std::vector<PgParam>& params,
                        std::string_view what, bool binary_result = false);
  // As Exec, for a statement that may block for long (an advisory lock): the wait for its answer
  // ends with kCancelled as soon as `stop` is requested, leaving the connection mid-statement
  // (Unusable: drop it).
  Result<PgResult> ExecUntilStopped(std::string_view sql, const std::vector<PgParam>& params,
                                    std::string_view what, std::stop_token stop);
  // Statements without parameters or rows (may be several, separated by ';').
  Status Run(std::string_view sql, std::string_view what);

  // The SQLSTATE of the last failed statement ("" when it was not a server error).
  const std::string& last_sqlstate() const { return last_sqlstate_; }
  // True once the connection is lost, or when it is left inside a transaction: it must not be
  // used again (the pool drops it).
  bool Unusable() const;
  // True once the connection to the server is lost.
  bool Broken() const;
  int BackendPid() const;

  // --- LISTEN ----------------------------------------------------------------------------------
  int Socket() const;
  // Reads what the server sent (call when Socket() is readable); kUnavailable when the
  // connection is gone.
  Status ConsumeInput();
  std::optional<PgNotification> NextNotification();

  const std::string& label() const { return label_; }

 private:
  // The parameters of one statement in libpq's arrays (pointing into `params`).
  struct ParamArrays {
    explicit ParamArrays(const std::vector<PgParam>& params);
    std::vector<const char*> values;
    std::vector<int> lengths;
    std::vector<int> formats;
  };

  PgConnection(pg_conn* conn, std::string label);
  Error ErrorFrom(pg_result* result, std::string_view what);
  // The statement's result (PGRES_TUPLES_OK or PGRES_COMMAND_OK) or its error; takes `result`.
  Result<PgResult> Finish(pg_result* result, std::string_view what, bool binary_result);

  pg_conn* conn_;
  const std::string label_;
  std::string last_sqlstate_;
};

// Runs `body` inside BEGIN … COMMIT on `conn`, rolling back when it fails. A COMMIT that breaks
// off on a lost connection is reported in *commit_broke (its outcome is unknown).
Status InTransaction(PgConnection& conn, std::string_view what, const std::function<Status()>& body,
                     bool* commit_broke);

// "host:port/database" of a connection string, for messages (never the password). kInvalidArgument
// when libpq cannot parse it.
Result<std::string> DescribeConninfo(const std::string& conninfo);
// The connection string carries a password (false when libpq cannot parse it).
bool ConninfoHasPassword(const std::string& conninfo);

// At most `max_size` connections at once; callers beyond that wait for one to come back. Idle
// connections are reused; a connection that became unusable is dropped when it comes back, and
// DropIdle() drops every idle one (after PostgreSQL restarted, say).
class PgPool {
 public:
  // `metrics` (may be null) is told the connections out and the callers waiting after each change.
  PgPool(std::string conninfo, std::string label, int max_size,
         metrics::Metrics* metrics = nullptr);
  ~PgPool();
  PgPool(const PgPool&) = delete;
  PgPool& operator=(const PgPool&) = delete;

  class Lease {
   public:
    Lease(PgPool* pool, std::unique_ptr<PgConnection> conn) : pool_(pool), conn_(std::move(conn)) {}
    Lease(Lease&& other) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    PgConnection& operator*() { return *conn_; }
    PgConnection* operator->() { return conn_.get(); }

   private:
    PgPool* pool_;
    std::unique_ptr<PgConnection> conn_;
  };

  // An idle connection, or a new one; waits while max_size are out — until `stop` is requested
  // (kCancelled).
  Result<Lease> Acquire(std::stop_token stop = {});
  void DropIdle();
  int max_size() const { return max_size_; }
  const std::string& label() const { return label_; }
  const std::string& conninfo() const { return conninfo_; }

 private:
  void Return(std::unique_ptr<PgConnection> conn);
  void Publish() const REQUIRES(mu_);  // under mu_

  const std::string conninfo_;
  const std::string label_;
  const int max_size_;
  metrics::Metrics* const metrics_;
  Mutex mu_;  // guards idle_, out_ and waiting_
  std::condition_variable_any returned_;
  std::vector<std::unique_ptr<PgConnection>> idle_ GUARDED_BY(mu_);
  int out_ GUARDED_BY(mu_) = 0;      // connections handed out (or being opened)
  int waiting_ GUARDED_BY(mu_) = 0;  // callers waiting in Acquire
};

}  // namespace imgmcp::session::postgres
