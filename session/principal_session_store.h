// PrincipalSessionStore: one principal's view of a SessionStore (session/principal_scope.h). Every
// session id it is given is the principal's own name for the session and is stored under
// ScopedSessionId(principal, id); every id it hands back (versions, listings, reservations, task
// rows) is that name again. So a tool that reads and writes through the view never sees another
// principal's sessions — another person's "fox" is a different stored session — and its answers
// name sessions as their owner does. Spend holds drawn through it are the principal's.
//
// A view may also reach only one of the principal's sessions (a gallery link's bearer,
// `only_session`): every other session id is answered as an unknown session, and listings hold
// that session alone.
//
// Thread-safe as the store it wraps is; cheap to make (one per call). It must not outlive that
// store. Change and task listeners are not offered through a view: set them on the store itself
// (its changes name stored ids: SplitScopedSessionId takes them apart).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "session/session_store.h"

namespace imgmcp::session {

class PrincipalSessionStore final : public SessionStore {
 public:
  // `principal` must be valid (IsValidPrincipal) and not "": the local principal needs no view.
  // `only_session` "" reaches all of the principal's sessions.
  PrincipalSessionStore(SessionStore& store, std::string principal, std::string only_session = "");

  const std::string& principal() const { return principal_; }

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
  // Always the view's principal's sessions, whichever principal is named.
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
  Result<int64_t> SweepTasks() override { return store_.SweepTasks(); }

  Result<int64_t> ReserveSpend(const SpendHold& hold, const SpendBudgets& budgets) override;
  Status SettleSpend(int64_t id, const SpendCharge& charge) override {
    return store_.SettleSpend(id, charge);
  }
  Status RenewSpendHold(int64_t id, int64_t expires_ms) override {
    return store_.RenewSpendHold(id, expires_ms);
  }
  Status ReleaseSpend(int64_t id) override { return store_.ReleaseSpend(id); }
  Result<SpendTotals> SpendTotalsFor(const SpendHold& hold) override;

 private:
  std::string Stored(const std::string& session_id) const;
  SpendHold StoredHold(const SpendHold& hold) const;
  // True when the view reaches one session only and `session_id` is another.
  bool Excluded(const std::string& session_id) const {
    return !only_session_.empty() && session_id != only_session_;
  }
  // The error for a session id the view does not reach: invalid, or Excluded.
  std::optional<Error> Unreachable(const std::string& session_id) const;

  SessionStore& store_;
  const std::string principal_;
  const std::string only_session_;
};

// Whose sessions `store` reaches: a view's principal, else "" (the local principal's).
const std::string& PrincipalOf(const SessionStore& store);

// The store as `principal` sees it (restricted to `only_session` when not ""): `store` itself for
// the local principal, else a view. Lives as long as the call that reads and writes through it.
class StoreOfPrincipal {
 public:
  StoreOfPrincipal(SessionStore& store, const std::string& principal,
                   const std::string& only_session)
      : store_(store) {
    if (!principal.empty()) view_.emplace(store, principal, only_session);
  }
  StoreOfPrincipal(const StoreOfPrincipal&) = delete;
  StoreOfPrincipal& operator=(const StoreOfPrincipal&) = delete;
  SessionStore& get() { return view_ ? *view_ : store_; }

 private:
  SessionStore& store_;
  std::optional<PrincipalSessionStore> view_;
};

}  // namespace imgmcp::session
