#include "session/deferred_session_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <utility>

#include "common/cancellation.h"
#include "common/log.h"
#include "common/posix_io.h"
#include "common/random.h"
#include "common/unique_fd.h"
#include "session/data_dir.h"
#include "session/file_io.h"
#include "session/principal_scope.h"

namespace imgmcp::session {

namespace {

constexpr char kLog[] = "session";

Error ProbeError(const std::string& what, const std::filesystem::path& path, int err) {
  return Error(err == EACCES || err == EPERM || err == EROFS ? ErrorCode::kPermissionDenied
                                                             : ErrorCode::kFailedPrecondition,
               what + " " + path.string() + ": " + ErrnoText(err));
}

// Creates, writes, flocks and removes a uniquely named file in `dir`: proves the directory takes
// new files and that flock works on its file system.
Status ProbeWriteAndLock(const std::filesystem::path& dir) {
  const std::filesystem::path probe =
      dir / (".startup-probe-" + std::to_string(::getpid()) + "-" + RandomHex(4));
  UniqueFd fd(::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return ProbeError("cannot create a file in", dir, errno);
  Status status;
  if (const int err = WriteAll(fd.get(), "x"); err != 0) {
    status = ProbeError("cannot write a file in", dir, err);
  } else if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    status = ProbeError("cannot lock a file (flock) in", dir, errno);
  }
  fd.Reset();
  ::unlink(probe.c_str());
  return status;
}

}  // namespace

Status CheckDataDirUsable(const std::filesystem::path& data_dir) {
  if (data_dir.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "the session store needs a data directory");
  }
  std::error_code ec;
  const std::filesystem::path root = std::filesystem::absolute(data_dir, ec).lexically_normal();
  if (ec) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "bad data directory " + data_dir.string() + ": " + ec.message());
  }
  const DataDirLayout layout(root);
  for (const auto& dir : {layout.root(), layout.ImagesDir(), layout.LocksDir()}) {
    RETURN_IF_ERROR(EnsureDir(dir));
  }
  struct stat st {};
  if (::lstat(layout.DatabasePath().c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     layout.DatabasePath().string() + " exists and is not a regular file");
  }
  RETURN_IF_ERROR(ProbeWriteAndLock(layout.root()));
  return ProbeWriteAndLock(layout.LocksDir());
}

// A place drawn before the real store existed. Converted by Open (under the store's mu_) into a
// real reservation, or into the open error.
class DeferredSessionStore::PendingReservation final : public TurnReservation {
 public:
  PendingReservation(DeferredSessionStore* owner, std::string session_id)
      : owner_(owner), session_id_(std::move(session_id)) {}
  ~PendingReservation() override { owner_->Forget(this); }
  const std::string& session_id() const override { return session_id_; }

  // Written by Open under owner_->mu_ before the open is marked done; read after Store() has
  // observed done_ (same mutex), so no further locking is needed.
  bool listed = false;  // still in owner_->pending_ (guarded by owner_->mu_)
  std::unique_ptr<TurnReservation> real;
  std::optional<Error> error;

 private:
  DeferredSessionStore* const owner_;
  const std::string session_id_;
};

DeferredSessionStore::DeferredSessionStore(Opener opener, OpenStart start)
    : opener_(std::move(opener)) {
  if (start == OpenStart::kAtOnce) StartOpening();
}

void DeferredSessionStore::StartOpening() {
  std::call_once(started_, [this] { thread_ = std::thread([this] { Open(opener_); }); });
}

DeferredSessionStore::~DeferredSessionStore() {
  stop_.request_stop();
  if (thread_.joinable()) thread_.join();
}

Result<std::unique_ptr<SessionStore>> DeferredSessionStore::Attempt(const Opener& opener) {
  Result<std::unique_ptr<SessionStore>> opened =
      MakeError(ErrorCode::kInternal, "the session store opener did not run");
  try {
    opened = opener();
  } catch (const std::exception& e) {  // third-party code below (filesystem, SQLite wrappers)
    opened = MakeError(ErrorCode::kInternal,
                       std::string("opening the session store threw: ") + e.what());
  }
  if (opened.ok() && *opened == nullptr) {
    opened = MakeError(ErrorCode::kInternal, "the session store opener returned no store");
  }
  return opened;
}

void DeferredSessionStore::Open(const Opener& opener) {
  std::chrono::milliseconds pause = kFirstRetryPause;
  for (int attempt = 1;; ++attempt) {
    Result<std::unique_ptr<SessionStore>> opened = Attempt(opener);
    if (opened.ok() || opened.error().code != ErrorCode::kUnavailable) {
      const bool opened_late = opened.ok() && attempt > 1;
      Finish(std::move(opened));
      // Said once calls can use the store, never before: clients and tests wait for this line.
      if (opened_late) {
        log::Info(kLog, "the session store is open (attempt " + std::to_string(attempt) + ")");
      }
      return;
    }
    ReportRetry(opened.error(), pause, attempt);
    if (!SleepUnlessStopped(pause, stop_.get_token())) return Finish(opened.error());
    pause = std::min(pause * 2, kMaxRetryPause);
  }
}

void DeferredSessionStore::ReportRetry(const Error& problem, std::chrono::milliseconds pause,
                                       int attempt) {
  const std::string message = "cannot open the session store yet: " + problem.message +
                              "; retrying (attempt " + std::to_string(attempt + 1) + " in " +
                              std::to_string(pause.count()) + " ms)";
  if (attempt == 1) {
    log::Warn(kLog, message + "; tool calls report this until it opens");
  } else {
    log::Debug(kLog, message);
  }
  {
    MutexLock lock(mu_);
    retrying_ =
        Error(ErrorCode::kUnavailable, "the session store is not open yet: " + problem.message +
                                           " (imgmcp keeps retrying; try again shortly)");
  }
  opened_cv_.notify_all();
}

void DeferredSessionStore::Finish(Result<std::unique_ptr<SessionStore>> opened) {
  if (!opened.ok()) {
    log::Error(kLog, "cannot open the session store: " + opened.error().message +
                         "; every tool call will report this");
  }
  {
    MutexLock lock(mu_);
    retrying_.reset();
    if (opened.ok()) {
      store_ = std::move(*opened);
      if (listener_) store_->SetChangeListener(listener_);
      if (task_listener_) store_->SetTaskListener(task_listener_);
      // Arrival order: every placeholder draws its real place now, oldest first, before done_
      // lets any later caller reserve.
      for (PendingReservation* p : pending_) {
        auto real = store_->ReserveTurn(p->session_id());
        if (real.ok()) {
          p->real = std::move(*real);
        } else {
          p->error = real.error();
        }
        p->listed = false;
      }
    } else {
      error_ = opened.error();
      for (PendingReservation* p : pending_) {
        p->error = opened.error();
        p->listed = false;
      }
    }
    pending_.clear();
    done_ = true;
  }
  opened_cv_.notify_all();
}

Status DeferredSessionStore::WaitUntilOpen() {
  auto store = Store();
  if (!store.ok()) return store.error();
  return Status::Ok();
}

Status DeferredSessionStore::WaitForOpen(std::chrono::milliseconds timeout, std::stop_token stop) {
  StartOpening();
  MutexLock lock(mu_);
  const auto done = [this] {
    mu_.AssertHeld();
    return done_;
  };
  if (!opened_cv_.wait_for(lock, stop, timeout, done)) {
    if (retrying_.has_value()) return *retrying_;
    return MakeError(ErrorCode::kDeadlineExceeded, "the session store is still opening");
  }
  if (error_) return *error_;
  return Status::Ok();
}

bool DeferredSessionStore::OpenFinished() const {
  MutexLock lock(mu_);
  return done_;
}

Result<SessionStore*> DeferredSessionStore::Store(std::stop_token cancel) {
  StartOpening();
  MutexLock lock(mu_);
  const auto answerable = [this] {
    mu_.AssertHeld();
    return done_ || retrying_.has_value();
  };
  if (!opened_cv_.wait(lock, cancel, answerable)) {
    return MakeError(ErrorCode::kCancelled, "cancelled while the session store was opening");
  }
  if (!done_) return *retrying_;
  if (error_) return *error_;
  return store_.get();
}

void DeferredSessionStore::Forget(PendingReservation* pending) {
  MutexLock lock(mu_);
  if (!pending->listed) return;
  pending_.remove(pending);
  pending->listed = false;
}

Result<std::unique_ptr<TurnReservation>> DeferredSessionStore::ReserveTurn(
    const std::string& session_id) {
  StartOpening();
  SessionStore* store = nullptr;
  {
    MutexLock lock(mu_);
    if (!done_) {
      if (!IsValidStoredSessionId(session_id)) {
        return MakeError(ErrorCode::kInvalidArgument, "invalid session id");
      }
      auto pending = std::make_unique<PendingReservation>(this, session_id);
      pending_.push_back(pending.get());
      pending->listed = true;
      return std::unique_ptr<TurnReservation>(std::move(pending));
    }
    if (error_) return *error_;
    store = store_.get();
  }
  return store->ReserveTurn(session_id);
}

Result<std::unique_ptr<EditTurn>> DeferredSessionStore::AcquireReservedTurn(
    std::unique_ptr<TurnReservation> reservation, const TurnOptions& options) {
  auto store = Store(options.cancel);
  if (!store.ok()) return store.error();
  if (auto* pending = dynamic_cast<PendingReservation*>(reservation.get()); pending != nullptr) {
    if (pending->error) return *pending->error;
    if (pending->real == nullptr) {
      return MakeError(ErrorCode::kInternal, "a deferred turn reservation was not converted");
    }
    std::unique_ptr<TurnReservation> real = std::move(pending->real);
    reservation.reset();
    return (*store)->AcquireReservedTurn(std::move(real), options);
  }
  return (*store)->AcquireReservedTurn(std::move(reservation), options);
}

Result<std::unique_ptr<EditTurn>> DeferredSessionStore::AcquireTurn(const std::string& session_id,
                                                                    const TurnOptions& options) {
  auto store = Store(options.cancel);
  if (!store.ok()) return store.error();
  return (*store)->AcquireTurn(session_id, options);
}

Result<VersionInfo> DeferredSessionStore::GetVersion(const std::string& session_id,
                                                     std::optional<int64_t> version) {
  auto store = Store();
  if (!store.ok()) return store.error();
  return (*store)->GetVersion(session_id, version);
}

Result<std::string> DeferredSessionStore::ReadImage(const VersionInfo& version) {
  auto store = Store();
  if (!store.ok()) return store.error();
  return (*store)->ReadImage(version);
}

Result<SessionSnapshot> DeferredSessionStore::ReadSession(const std::string& session_id,
                                                          std::optional<int64_t> version,
                                                          bool include_history) {
  auto store = Store();
  if (!store.ok()) return store.error();
  return (*store)->ReadSession(session_id, version, include_history);
}

Result<SessionPage> DeferredSessionStore::ListSessions(const std::string& principal,
                                                       const std::optional<std::string>& cursor,
                                                       int limit) {
  auto store = Store();
  if (!store.ok()) return store.error();
  return (*store)->ListSessions(principal, cursor, limit);
}

Result<std::optional<AppliedKey>> DeferredSessionStore::FindAppliedKey(
    const std::string& session_id, const std::string& key) {
  auto store = Store();
  if (!store.ok()) return store.error();
  return (*store)->FindAppliedKey(session_id, key);
}

Result<TaskRecord> DeferredSessionStore::CreateTask(const NewTask& task) {
  ASSIGN_OR_RETURN(SessionStore * store, Store());
  return store->CreateTask(task);
}

Result<std::optional<TaskRecord>> DeferredSessionStore::GetTask(const std::string& task_id,
                                                                const std::string& owner) {
  ASSIGN_OR_RETURN(SessionStore * store, Store());
  return store->GetTask(task_id, owner);
}

Result<TaskRecord> DeferredSessionStore::UpdateTask(const TaskUpdate& update) {
  ASSIGN_OR_RETURN(SessionStore * store, Store());
  return store->UpdateTask(update);
}

Result<TaskPage> DeferredSessionStore::ListTasks(const std::string& owner,
                                                 const std::optional<std::string>& cursor,
                                                 int limit) {
  ASSIGN_OR_RETURN(SessionStore * store, Store());
  return store->ListTasks(owner, cursor, limit);
}

Result<int64_t> DeferredSessionStore::SweepTasks() {
  ASSIGN_OR_RETURN(SessionStore * store, Store());
  return store->SweepTasks();
}

Result<int64_t> DeferredSessionStore::ReserveSpend(const SpendHold& hold,
                                                   const SpendBudgets& budgets) {
  ASSIGN_OR_RETURN(SessionStore * store, Store());
  return store->ReserveSpend(hold, budgets);
}

Status DeferredSessionStore::SettleSpend(int64_t id, const SpendCharge& charge) {
  ASSIGN_OR_RETURN(SessionStore * store, Store());
  return store->SettleSpend(id, charge);
}

Status DeferredSessionStore::RenewSpendHold(int64_t id, int64_t expires_ms) {
  ASSIGN_OR_RETURN(SessionStore * store, Store());
  return store->RenewSpendHold(id, expires_ms);
}

Status DeferredSessionStore::ReleaseSpend(int64_t id) {
  ASSIGN_OR_RETURN(SessionStore * store, Store());
  return store->ReleaseSpend(id);
}

Result<SpendTotals> DeferredSessionStore::SpendTotalsFor(const SpendHold& hold) {
  ASSIGN_OR_RETURN(SessionStore * store, Store());
  return store->SpendTotalsFor(hold);
}

Result<int64_t> DeferredSessionStore::CountCall(const std::string& principal, int64_t window_ms,
                                                int64_t forget_before_ms) {
  ASSIGN_OR_RETURN(SessionStore * store, Store());
  return store->CountCall(principal, window_ms, forget_before_ms);
}

Result<std::string> DeferredSessionStore::SharedKey(const std::string& name,
                                                    const std::string& candidate) {
  ASSIGN_OR_RETURN(SessionStore * store, Store());
  return store->SharedKey(name, candidate);
}

Status DeferredSessionStore::RecordAudit(const AuditEvent& event) {
  ASSIGN_OR_RETURN(SessionStore * store, Store());
  return store->RecordAudit(event);
}

Result<std::vector<AuditEvent>> DeferredSessionStore::ReadAudit(const AuditQuery& query) {
  ASSIGN_OR_RETURN(SessionStore * store, Store());
  return store->ReadAudit(query);
}

Result<int64_t> DeferredSessionStore::ForgetAudit(int64_t before_ms) {
  ASSIGN_OR_RETURN(SessionStore * store, Store());
  return store->ForgetAudit(before_ms);
}

bool DeferredSessionStore::SessionExists(const std::string& session_id) {
  auto store = Store();
  if (!store.ok()) return IsValidStoredSessionId(session_id);  // see the header
  return (*store)->SessionExists(session_id);
}

void DeferredSessionStore::SetChangeListener(ChangeListener listener) {
  MutexLock lock(mu_);
  listener_ = listener;
  // Under mu_, so that Open cannot hand over an older listener after this one.
  if (store_ != nullptr) store_->SetChangeListener(std::move(listener));
}

void DeferredSessionStore::SetTaskListener(TaskListener listener) {
  MutexLock lock(mu_);
  task_listener_ = listener;
  if (store_ != nullptr) store_->SetTaskListener(std::move(listener));
}

}  // namespace imgmcp::session
