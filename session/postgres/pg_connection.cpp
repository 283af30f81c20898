#include "session/postgres/pg_connection.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/ascii.h"
#include "common/decimal.h"
#include "common/log.h"
#include "common/posix_io.h"
#include "common/unique_fd.h"
#include "session/postgres/libpq_api.h"
#include "session/postgres/log_tag.h"

namespace imgmcp::session::postgres {
namespace {

// SQLSTATE classes that mean "the server or the connection went away, or the transaction lost a
// race; nothing was done and retrying may help".
bool IsTransient(const std::string& sqlstate) {
  return sqlstate.rfind("08", 0) == 0 ||   // connection exception
         sqlstate.rfind("57P", 0) == 0 ||  // admin shutdown, crash shutdown, cannot connect now
         sqlstate == "40001" ||            // serialization failure
         sqlstate == "40P01" ||            // deadlock detected
         sqlstate == "53300";              // too many connections
}

// libpq's functions; only called once LoadLibPq succeeded (in Connect or DescribeConninfo),
// which every object here comes after.
const LibPq& Pq() {
  static const LibPq* const api = *LoadLibPq();
  return *api;
}

// Why a connection attempt failed, from libpq's message. Only kUnavailable is worth retrying: the
// server is down, unreachable or not accepting connections yet, or the database does not exist
// yet. Authentication (a wrong password, an unknown role, no pg_hba.conf entry) and bad option
// values (sslmode=…) stay wrong until the configuration changes.
ErrorCode ClassifyConnectFailure(const std::string& message) {
  const auto says = [&](const char* text) { return message.find(text) != std::string::npos; };
  if (says("password authentication failed") || says("no password supplied") ||
      says("authentication failed") || says("role \"") || says("pg_hba.conf")) {
    return ErrorCode::kPermissionDenied;
  }
  if (says("invalid sslmode") || says("invalid connection option") || says("invalid value") ||
      says("invalid integer value") || says("SSL is not enabled") || says("sslmode value")) {
    return ErrorCode::kInvalidArgument;
  }
  return ErrorCode::kUnavailable;
}

std::string Trimmed(const char* text) {
  return std::string(TrimAsciiWhitespace(text != nullptr ? text : ""));
}

}  // namespace

// --- PgResult -------------------------------------------------------------------------------

PgResult::~PgResult() {
  if (result_ != nullptr) Pq().PQclear(result_);
}

int PgResult::Rows() const { return Pq().PQntuples(result_); }

bool PgResult::IsNull(int row, int col) const { return Pq().PQgetisnull(result_, row, col) != 0; }

std::string PgResult::Text(int row, int col) const {
  return std::string(Pq().PQgetvalue(result_, row, col),
                     static_cast<size_t>(Pq().PQgetlength(result_, row, col)));
}

int64_t PgResult::Int(int row, int col) const {
  if (IsNull(row, col)) return 0;
  return ParseDecimal<int64_t>(Pq().PQgetvalue(result_, row, col)).value_or(0);
}

std::optional<int64_t> PgResult::OptionalInt(int row, int col) const {
  if (IsNull(row, col)) return std::nullopt;
  return Int(row, col);
}

bool PgResult::Bool(int row, int col) const {
  return !IsNull(row, col) && Pq().PQgetvalue(result_, row, col)[0] == 't';
}

// --- PgConnection ---------------------------------------------------------------------------

Result<std::string> DescribeConninfo(const std::string& conninfo) {
  if (Result<const LibPq*> api = LoadLibPq(); !api.ok()) return api.error();
  char* err = nullptr;
  PQconninfoOption* options = Pq().PQconninfoParse(conninfo.c_str(), &err);
  if (options == nullptr) {
    std::string message = Trimmed(err);
    if (err != nullptr) Pq().PQfreemem(err);
    return MakeError(ErrorCode::kInvalidArgument, "not a PostgreSQL connection string: " + message);
  }
  std::string host, port, dbname, user;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    const std::string key = o->keyword;
    if (key == "host" || (key == "hostaddr" && host.empty())) host = o->val;
    if (key == "port") port = o->val;
    if (key == "dbname") dbname = o->val;
    if (key == "user") user = o->val;
  }
  Pq().PQconninfoFree(options);
  if (host.empty()) host = "localhost";
  if (dbname.empty()) dbname = user.empty() ? "(default database)" : user;
  return host + (port.empty() ? "" : ":" + port) + "/" + dbname;
}

bool ConninfoHasPassword(const std::string& conninfo) {
  if (!LoadLibPq().ok()) return false;
  char* err = nullptr;
  PQconninfoOption* options = Pq().PQconninfoParse(conninfo.c_str(), &err);
  if (err != nullptr) Pq().PQfreemem(err);
  if (options == nullptr) return false;
  bool has = false;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    has = has || (std::strcmp(o->keyword, "password") == 0 && o->val != nullptr && o->val[0]);
  }
  Pq().PQconninfoFree(options);
  return has;
}

PgConnection::PgConnection(pg_conn* conn, std::string label)
    : conn_(conn), label_(std::move(label)) {}

PgConnection::~PgConnection() { Pq().PQfinish(conn_); }

Result<std::unique_ptr<PgConnection>> PgConnection::Connect(const std::string& conninfo,
                                                            const std::string& label) {
  if (Result<const LibPq*> api = LoadLibPq(); !api.ok()) return api.error();
  // Defaults first; the caller's string (expanded from dbname) overrides them. TCP keepalives
  // notice a server that vanished without closing the connection (a dead machine).
  const char* keywords[] = {"connect_timeout",
                            "application_name",
                            "keepalives_idle",
                            "keepalives_interval",
                            "keepalives_count",
                            "dbname",
                            nullptr};
  const char* values[] = {"5", "imgmcp", "10", "5", "3", conninfo.c_str(), nullptr};
  pg_conn* conn = Pq().PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (conn == nullptr) {
    return MakeError(ErrorCode::kResourceExhausted, "out of memory connecting to PostgreSQL");
  }
  if (Pq().PQstatus(conn) != CONNECTION_OK) {
    const std::string message = Trimmed(Pq().PQerrorMessage(conn));
    Pq().PQfinish(conn);
    const ErrorCode code = ClassifyConnectFailure(message);
    const char* hint = code == ErrorCode::kPermissionDenied
                           ? " (check the user and password: the URL, PGPASSWORD or ~/.pgpass)"
                       : code == ErrorCode::kInvalidArgument ? " (check the connection URL)"
                                                             : "";
    return MakeError(code, "cannot connect to PostgreSQL at " + label + ": " + message + hint);
  }
  // Server notices (and the notice of a terminated connection) go to the log, not to stderr raw.
  Pq().PQsetNoticeProcessor(
      conn, [](void*, const char* message) { log::Debug(kLog, Trimmed(message)); }, nullptr);
  std::unique_ptr<PgConnection> out(new PgConnection(conn, label));
  // Durability is the point: a commit returns only once its WAL is flushed. The server-side
  // keepalives make PostgreSQL notice within ~25 s that a replica's machine died without closing
  // its connections, so its turns are released (a crashed process closes them at once).
  if (Status st = out->Run("SET synchronous_commit = on; SET tcp_keepalives_idle = 10; "
                           "SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3",
                           "setting up the connection");
      !st.ok()) {
    return st.error();
  }
  return out;
}

Error PgConnection::ErrorFrom(pg_result* result, std::string_view what) {
  const char* state =
      result != nullptr ? Pq().PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  last_sqlstate_ = state != nullptr ? state : "";
  std::string message = result != nullptr ? Trimmed(Pq().PQresultErrorMessage(result)) : "";
  if (message.empty()) message = Trimmed(Pq().PQerrorMessage(conn_));
  ErrorCode code = ErrorCode::kInternal;
  if (Pq().PQstatus(conn_) != CONNECTION_OK || IsTransient(last_sqlstate_)) {
    code = ErrorCode::kUnavailable;
  } else if (last_sqlstate_.rfind("23", 0) == 0) {
    code = ErrorCode::kConflict;
  }
  if (Pq().PQstatus(conn_) != CONNECTION_OK) {
    return Error(code, "lost the connection to PostgreSQL at " + label_ + " while " +
                           std::string(what) + ": " + message);
  }
  return Error(code,
               "PostgreSQL at " + label_ + ": " + message + " (while " + std::string(what) + ")");
}

PgConnection::ParamArrays::ParamArrays(const std::vector<PgParam>& params)
    : values(params.size()), lengths(params.size()), formats(params.size()) {
  for (size_t i = 0; i < params.size(); ++i) {
    const PgParam& p = params[i];
    if (p.is_null) {
      values[i] = nullptr;
    } else if (p.binary) {
      values[i] = p.bytes.data() != nullptr ? p.bytes.data() : "";
      lengths[i] = static_cast<int>(p.bytes.size());
      formats[i] = 1;
    } else {
      values[i] = p.text.c_str();
    }
  }
}

Result<PgResult> PgConnection::Finish(pg_result* result, std::string_view what,
                                      bool binary_result) {
  const ExecStatusType status = result != nullptr ? Pq().PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    Error e = ErrorFrom(result, what);
    if (result != nullptr) Pq().PQclear(result);
    return e;
  }
  last_sqlstate_.clear();
  return PgResult(result, binary_result);
}

Result<PgResult> PgConnection::Exec(std::string_view sql, const std::vector<PgParam>& params,
                                    std::string_view what, bool binary_result) {
  const ParamArrays arrays(params);
  const std::string text(sql);
  pg_result* result = Pq().PQexecParams(conn_, text.c_str(), static_cast<int>(params.size()),
                                        nullptr, arrays.values.data(), arrays.lengths.data(),
                                        arrays.formats.data(), binary_result ? 1 : 0);
  return Finish(result, what, binary_result);
}

Result<PgResult> PgConnection::ExecUntilStopped(std::string_view sql,
                                                const std::vector<PgParam>& params,
                                                std::string_view what, std::stop_token stop) {
  const ParamArrays arrays(params);
  const std::string text(sql);
  if (Pq().PQsendQueryParams(conn_, text.c_str(), static_cast<int>(params.size()), nullptr,
                             arrays.values.data(), arrays.lengths.data(), arrays.formats.data(),
                             0) == 0) {
    return ErrorFrom(nullptr, what);
  }
  // The answer or a stop, whichever comes first: the stop writes to an eventfd polled beside the
  // socket.
  const UniqueFd wake_fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));  // outlives on_stop below
  const int wake = wake_fd.get();
  if (!wake_fd.valid()) return Error(ErrorCode::kInternal, "cannot create an eventfd");
  std::stop_callback on_stop(stop, [wake] {
    const uint64_t one = 1;
    (void)!::write(wake, &one, sizeof one);
  });
  Status waited = Status::Ok();
  while (Pq().PQisBusy(conn_) != 0) {
    pollfd fds[2] = {{Socket(), POLLIN, 0}, {wake, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      waited = Error(ErrorCode::kInternal, std::string("poll failed: ") + ErrnoText(errno));
      break;
    }
    if (fds[1].revents != 0) {
      waited = Error(ErrorCode::kCancelled, "stopped while " + std::string(what));
      break;
    }
    if (Status st = ConsumeInput(); !st.ok()) {
      waited = st;
      break;
    }
  }
  if (!waited.ok()) return waited.error();
  pg_result* last = nullptr;
  while (pg_result* next = Pq().PQgetResult(conn_)) {
    if (last != nullptr) Pq().PQclear(last);
    last = next;
  }
  return Finish(last, what, /*binary_result=*/false);
}

Status PgConnection::Run(std::string_view sql, std::string_view what) {
  const std::string text(sql);
  pg_result* result = Pq().PQexec(conn_, text.c_str());
  const ExecStatusType status = result != nullptr ? Pq().PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    Error e = ErrorFrom(result, what);
    if (result != nullptr) Pq().PQclear(result);
    return e;
  }
  Pq().PQclear(result);
  last_sqlstate_.clear();
  return Status::Ok();
}

bool PgConnection::Unusable() const {
  return Pq().PQstatus(conn_) != CONNECTION_OK || Pq().PQtransactionStatus(conn_) != PQTRANS_IDLE;
}

bool PgConnection::Broken() const { return Pq().PQstatus(conn_) != CONNECTION_OK; }

int PgConnection::BackendPid() const { return Pq().PQbackendPID(conn_); }

int PgConnection::Socket() const { return Pq().PQsocket(conn_); }

Status PgConnection::ConsumeInput() {
  if (Pq().PQconsumeInput(conn_) == 0 || Pq().PQstatus(conn_) != CONNECTION_OK) {
    return Error(ErrorCode::kUnavailable, "lost the connection to PostgreSQL at " + label_ + ": " +
                                              Trimmed(Pq().PQerrorMessage(conn_)));
  }
  return Status::Ok();
}

std::optional<PgNotification> PgConnection::NextNotification() {
  PGnotify* n = Pq().PQnotifies(conn_);
  if (n == nullptr) return std::nullopt;
  PgNotification out{n->relname != nullptr ? n->relname : "", n->extra != nullptr ? n->extra : "",
                     n->be_pid};
  Pq().PQfreemem(n);
  return out;
}

Status InTransaction(PgConnection& conn, std::string_view what, const std::function<Status()>& body,
                     bool* commit_broke) {
  RETURN_IF_ERROR(conn.Run("BEGIN", what));
  if (Status done = body(); !done.ok()) {
    if (!conn.Broken()) (void)conn.Run("ROLLBACK", "rolling back");
    return done;
  }
  Status committed = conn.Run("COMMIT", what);
  if (!committed.ok() && commit_broke != nullptr) *commit_broke = conn.Broken();
  return committed;
}

// --- PgPool ---------------------------------------------------------------------------------

PgPool::PgPool(std::string conninfo, std::string label, int max_size, metrics::Metrics* metrics)
    : conninfo_(std::move(conninfo)),
      label_(std::move(label)),
      max_size_(std::max(1, max_size)),
      metrics_(metrics) {}

void PgPool::Publish() const {
  if (metrics_ != nullptr) metrics_->SetStorePool(out_, waiting_);
}

PgPool::~PgPool() = default;

PgPool::Lease::~Lease() {
  if (conn_ != nullptr) pool_->Return(std::move(conn_));
}

Result<PgPool::Lease> PgPool::Acquire(std::stop_token stop) {
  {
    MutexLock lock(mu_);
    ++waiting_;
    Publish();
    const bool got = returned_.wait(lock, stop, [&] {
      mu_.AssertHeld();
      return !idle_.empty() || out_ < max_size_;
    });
    --waiting_;
    if (!got) {
      Publish();
      return Error(ErrorCode::kCancelled, "cancelled while waiting for a connection to PostgreSQL");
    }
    ++out_;
    Publish();
    if (!idle_.empty()) {
      std::unique_ptr<PgConnection> conn = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(conn));
    }
  }
  Result<std::unique_ptr<PgConnection>> conn = PgConnection::Connect(conninfo_, label_);
  if (!conn.ok()) {
    {
      MutexLock lock(mu_);
      --out_;
      Publish();
    }
    returned_.notify_one();
    return conn.error();
  }
  return Lease(this, std::move(*conn));
}

void PgPool::Return(std::unique_ptr<PgConnection> conn) {
  std::unique_ptr<PgConnection> dropped;
  {
    MutexLock lock(mu_);
    --out_;
    Publish();
    if (conn->Unusable()) {
      dropped = std::move(conn);  // closed outside the lock
    } else {
      idle_.push_back(std::move(conn));
    }
  }
  returned_.notify_one();
}

void PgPool::DropIdle() {
  std::vector<std::unique_ptr<PgConnection>> dropped;
  {
    MutexLock lock(mu_);
    dropped.swap(idle_);
  }
}

}  // namespace imgmcp::session::postgres
