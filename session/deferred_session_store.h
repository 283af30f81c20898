// DeferredSessionStore: a SessionStore whose real store opens on a background thread, so the
// server can answer `initialize` (and ping, tools/list) at once while SQLite migrates, checks and
// sweeps a possibly large data directory (docs/design.md §3, "Start-up order").
//
// Every method waits for the open to finish, then delegates — or, when the open failed, returns
// the open error. So a call that arrives while the store is still opening waits for it; it never
// sees an empty or stale state. (After a failed open SessionExists answers true for any valid id:
// "unknown session" would hide the real problem, and the caller's next call reports it.)
//
// ReserveTurn never blocks (the protocol core calls it on the reading thread): before the open
// has finished it returns a placeholder that remembers the session and its place in arrival order.
// When the open succeeds, the opening thread converts every live placeholder into a real
// reservation, in arrival order, before any later ReserveTurn/AcquireTurn can draw a place — so
// turns follow arrival order across the open exactly as they do afterwards. A placeholder given
// up before the open finishes (cancelled call) is simply dropped.
//
// An open that fails with kUnavailable (PostgreSQL not reachable yet, say) is retried with a
// growing pause (kFirstRetryPause doubling to kMaxRetryPause) until it succeeds or the store is
// destroyed; meanwhile calls do not wait but fail at once with that error, saying that the open
// is being retried. Any other failure is final: every call reports it.
//
// What cannot wait for the background thread is checked synchronously first: CheckDataDirUsable
// (can the directory be created, written and locked?) runs before the server answers anything, so
// a server that could never work refuses to start with a clear message and a non-zero exit.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "common/thread_annotations.h"
#include "session/session_store.h"

namespace imgmcp::session {

// Fast start-up check of a data directory (a few syscalls, no SQLite): creates it and its
// images/ and locks/ subdirectories (0700) if missing, creates, writes, flocks and removes a
// uniquely named probe file in locks/, and checks that an existing database path is a regular
// file. Errors name the path and the reason (e.g. "Not a directory", "Read-only file system").
Status CheckDataDirUsable(const std::filesystem::path& data_dir);

class DeferredSessionStore final : public SessionStore {
 public:
  using Opener = std::function<Result<std::unique_ptr<SessionStore>>()>;

  static constexpr std::chrono::milliseconds kFirstRetryPause{200};
  static constexpr std::chrono::milliseconds kMaxRetryPause{5000};

  // When the background open begins: at once, or when first needed — at StartOpening(), or at
  // the first call that needs the store (ReserveTurn, and every call that waits for the open),
  // whichever comes first. A stdio server begins it once it has answered its first message, so
  // the open's work does not compete with that answer (server/app/serve.cpp).
  enum class OpenStart { kAtOnce, kWhenNeeded };

  // Runs `opener` on a background thread, beginning as `start` says.
  explicit DeferredSessionStore(Opener opener, OpenStart start = OpenStart::kAtOnce);
  // Stops retrying, waits for an attempt in progress to end, then destroys the real store.
  ~DeferredSessionStore() override;
  DeferredSessionStore(const DeferredSessionStore&) = delete;
  DeferredSessionStore& operator=(const DeferredSessionStore&) = delete;

  // Begins the open if it has not begun (thread-safe; later calls do nothing).
  void StartOpening();

  // Blocks until the open has finished; its outcome (while it is being retried: the error that
  // made it retry).
  Status WaitUntilOpen();
  // Blocks until the open has finished, retries included, for at most `timeout` (or until `stop`
  // is requested); its outcome, or (before it finished) why it is still being retried.
  Status WaitForOpen(std::chrono::milliseconds timeout, std::stop_token stop = {});
  // Non-blocking: has the open finished (successfully or not)?
  bool OpenFinished() const;

  // --- SessionStore ---------------------------------------------------------------------------
  Result<std::unique_ptr<TurnReservation>> ReserveTurn(const std::string& session_id) override;
  Result<std::unique_ptr<EditTurn>> AcquireReservedTurn(
      std::unique_ptr<TurnReservation> reservation, const TurnOptions& options) override;
  Result<std::unique_ptr<EditTurn>> AcquireTurn(const std::string& session_id,
                                                const TurnOptions& options) override;
  Result<VersionInfo> GetVersion(const std::string& session_id,
                                 std::optional<int64_t> version) override;
  Result<std::string> ReadImage(const VersionInfo& version) override;
  Result<SessionSnapshot> ReadSession(const std::string& session_id, std::optional<int64_t> version,
                                      bool include_history) override;
  using SessionStore::ListSessions;
  Result<SessionPage> ListSessions(const std::string& principal,
                                   const std::optional<std::string>& cursor, int limit) override;
  bool SessionExists(const std::string& session_id) override;
  Result<std::optional<AppliedKey>> FindAppliedKey(const std::string& session_id,
                                                   const std::string& key) override;
  Result<TaskRecord> CreateTask(const NewTask& task) override;
  Result<std::optional<TaskRecord>> GetTask(const std::string& task_id,
                                            const std::string& owner) override;
  Result<TaskRecord> UpdateTask(const TaskUpdate& update) override;
  Result<TaskPage> ListTasks(const std::string& owner, const std::optional<std::string>& cursor,
                             int limit) override;
  Result<int64_t> SweepTasks() override;
  Result<int64_t> ReserveSpend(const SpendHold& hold, const SpendBudgets& budgets) override;
  Status SettleSpend(int64_t id, const SpendCharge& charge) override;
  Status RenewSpendHold(int64_t id, int64_t expires_ms) override;
  Status ReleaseSpend(int64_t id) override;
  Result<SpendTotals> SpendTotalsFor(const SpendHold& hold) override;
  Result<int64_t> CountCall(const std::string& principal, int64_t window_ms,
                            int64_t forget_before_ms) override;
  Result<std::string> SharedKey(const std::string& name, const std::string& candidate) override;
  Status RecordAudit(const AuditEvent& event) override;
  Result<std::vector<AuditEvent>> ReadAudit(const AuditQuery& query) override;
  Result<int64_t> ForgetAudit(int64_t before_ms) override;
  // Kept until the open finishes, then handed to the real store.
  void SetChangeListener(ChangeListener listener) override;
  void SetTaskListener(TaskListener listener) override;  // likewise

 private:
  class PendingReservation;

  void Open(const Opener& opener);
  // One attempt of `opener`, its exceptions and a null store turned into errors.
  static Result<std::unique_ptr<SessionStore>> Attempt(const Opener& opener);
  // Hands the real store (or the final error) to everyone waiting for it.
  void Finish(Result<std::unique_ptr<SessionStore>> opened);
  // Calls from now on fail with `problem` until an attempt succeeds.
  void ReportRetry(const Error& problem, std::chrono::milliseconds pause, int attempt);
  // The opened store, once the open finished (or its error; or, while the open is retried, the
  // problem); kCancelled when `cancel` stops the wait first.
  Result<SessionStore*> Store(std::stop_token cancel = {});
  // Called by a PendingReservation's destructor while it is still waiting for the open.
  void Forget(PendingReservation* pending);

  mutable Mutex mu_;                       // guards every field below up to stop_
  std::condition_variable_any opened_cv_;  // signalled once, when done_ becomes true
  bool done_ GUARDED_BY(mu_) = false;
  // Set (or error_) before done_; read-only afterwards.
  std::unique_ptr<SessionStore> store_ GUARDED_BY(mu_);
  std::optional<Error> error_ GUARDED_BY(mu_);
  std::optional<Error> retrying_ GUARDED_BY(mu_);  // why the open is being retried, until it ends
  // Placeholders in arrival order, until the open ends.
  std::list<PendingReservation*> pending_ GUARDED_BY(mu_);
  ChangeListener listener_ GUARDED_BY(mu_);     // for the real store once it is open
  TaskListener task_listener_ GUARDED_BY(mu_);  // likewise
  std::stop_source stop_;                       // the destructor's: ends the retries
  const Opener opener_;                         // read only by thread_
  std::once_flag started_;                      // StartOpening's: thread_ is started once
  std::thread thread_;  // runs Open; set once under started_; joined by the destructor
};

}  // namespace imgmcp::session
