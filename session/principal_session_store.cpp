#include "session/principal_session_store.h"

#include <utility>

#include "session/principal_scope.h"
#include "session/version_rules.h"

namespace imgmcp::session {
namespace {

// The owner's name of a stored session id.
std::string OwnName(const std::string& stored_id) {
  return std::string(SplitScopedSessionId(stored_id).session_id);
}

VersionInfo Named(VersionInfo version) {
  version.session_id = OwnName(version.session_id);
  return version;
}

std::optional<VersionInfo> Named(std::optional<VersionInfo> version) {
  if (version) version->session_id = OwnName(version->session_id);
  return version;
}

TaskRecord Named(TaskRecord task) {
  task.session_id = OwnName(task.session_id);
  return task;
}

// A place in the stored session's line, named as its owner names the session.
class NamedReservation final : public TurnReservation {
 public:
  NamedReservation(std::unique_ptr<TurnReservation> stored, std::string session_id)
      : stored_(std::move(stored)), session_id_(std::move(session_id)) {}
  const std::string& session_id() const override { return session_id_; }
  std::unique_ptr<TurnReservation> Release() { return std::move(stored_); }

 private:
  std::unique_ptr<TurnReservation> stored_;
  const std::string session_id_;
};

// The stored session's turn; the versions it hands back name the session as its owner does.
class NamedTurn final : public EditTurn {
 public:
  explicit NamedTurn(std::unique_ptr<EditTurn> stored) : stored_(std::move(stored)) {}
  std::optional<VersionInfo> Current() const override { return Named(stored_->Current()); }
  int64_t LastIssuedVersion() const override { return stored_->LastIssuedVersion(); }
  Result<std::vector<VersionInfo>> CommitVersions(
      const std::vector<NewVersion>& versions,
      const std::optional<IdempotencyRecord>& key) override {
    ASSIGN_OR_RETURN(std::vector<VersionInfo> committed, stored_->CommitVersions(versions, key));
    for (VersionInfo& v : committed) v = Named(std::move(v));
    return committed;
  }
  Status Clear(const std::optional<IdempotencyRecord>& key) override { return stored_->Clear(key); }

 private:
  std::unique_ptr<EditTurn> stored_;
};

Result<std::unique_ptr<EditTurn>> NamedTurnOf(Result<std::unique_ptr<EditTurn>> turn) {
  if (!turn.ok()) return turn.error();
  return std::unique_ptr<EditTurn>(std::make_unique<NamedTurn>(std::move(turn).value()));
}

}  // namespace

const std::string& PrincipalOf(const SessionStore& store) {
  static const std::string kLocal;
  const auto* view = dynamic_cast<const PrincipalSessionStore*>(&store);
  return view != nullptr ? view->principal() : kLocal;
}

PrincipalSessionStore::PrincipalSessionStore(SessionStore& store, std::string principal,
                                             std::string only_session)
    : store_(store), principal_(std::move(principal)), only_session_(std::move(only_session)) {}

std::optional<Error> PrincipalSessionStore::Unreachable(const std::string& session_id) const {
  if (!IsValidSessionId(session_id)) return InvalidSessionIdError(session_id);
  if (Excluded(session_id)) return UnknownSessionError(session_id);
  return std::nullopt;
}

std::string PrincipalSessionStore::Stored(const std::string& session_id) const {
  return ScopedSessionId(principal_, session_id);
}

SpendHold PrincipalSessionStore::StoredHold(const SpendHold& hold) const {
  SpendHold stored = hold;
  stored.session_id = Stored(hold.session_id);
  stored.principal = principal_;
  return stored;
}

Result<std::unique_ptr<TurnReservation>> PrincipalSessionStore::ReserveTurn(
    const std::string& session_id) {
  if (auto unreachable = Unreachable(session_id)) return *unreachable;
  ASSIGN_OR_RETURN(std::unique_ptr<TurnReservation> stored, store_.ReserveTurn(Stored(session_id)));
  return std::unique_ptr<TurnReservation>(
      std::make_unique<NamedReservation>(std::move(stored), session_id));
}

Result<std::unique_ptr<EditTurn>> PrincipalSessionStore::AcquireReservedTurn(
    std::unique_ptr<TurnReservation> reservation, const TurnOptions& options) {
  auto* named = dynamic_cast<NamedReservation*>(reservation.get());
  if (named == nullptr) {
    return MakeError(ErrorCode::kInternal, "a reservation from another store was given to a view");
  }
  return NamedTurnOf(store_.AcquireReservedTurn(named->Release(), options));
}

Result<std::unique_ptr<EditTurn>> PrincipalSessionStore::AcquireTurn(const std::string& session_id,
                                                                     const TurnOptions& options) {
  if (auto unreachable = Unreachable(session_id)) return *unreachable;
  return NamedTurnOf(store_.AcquireTurn(Stored(session_id), options));
}

Result<VersionInfo> PrincipalSessionStore::GetVersion(const std::string& session_id,
                                                      std::optional<int64_t> version) {
  if (auto unreachable = Unreachable(session_id)) return *unreachable;
  ASSIGN_OR_RETURN(VersionInfo info, store_.GetVersion(Stored(session_id), version));
  return Named(std::move(info));
}

Result<std::string> PrincipalSessionStore::ReadImage(const VersionInfo& version) {
  if (Excluded(version.session_id)) return UnknownSessionError(version.session_id);
  VersionInfo stored = version;
  stored.session_id = Stored(version.session_id);
  return store_.ReadImage(stored);
}

Result<SessionSnapshot> PrincipalSessionStore::ReadSession(const std::string& session_id,
                                                           std::optional<int64_t> version,
                                                           bool include_history) {
  if (auto unreachable = Unreachable(session_id)) return *unreachable;
  ASSIGN_OR_RETURN(SessionSnapshot snapshot,
                   store_.ReadSession(Stored(session_id), version, include_history));
  snapshot.version = Named(std::move(snapshot.version));
  for (VersionInfo& v : snapshot.history) v = Named(std::move(v));
  return snapshot;
}

Result<SessionPage> PrincipalSessionStore::ListSessions(const std::string& /*principal*/,
                                                        const std::optional<std::string>& cursor,
                                                        int limit) {
  ASSIGN_OR_RETURN(SessionPage page, store_.ListSessions(principal_, cursor, limit));
  std::vector<SessionSummary> reached;
  for (SessionSummary& s : page.sessions) {
    s.session_id = OwnName(s.session_id);
    if (Excluded(s.session_id)) continue;
    s.current = Named(std::move(s.current));
    reached.push_back(std::move(s));
  }
  page.sessions = std::move(reached);
  return page;
}

bool PrincipalSessionStore::SessionExists(const std::string& session_id) {
  return !Unreachable(session_id) && store_.SessionExists(Stored(session_id));
}

Result<std::optional<AppliedKey>> PrincipalSessionStore::FindAppliedKey(
    const std::string& session_id, const std::string& key) {
  if (auto unreachable = Unreachable(session_id)) return *unreachable;
  ASSIGN_OR_RETURN(std::optional<AppliedKey> applied,
                   store_.FindAppliedKey(Stored(session_id), key));
  if (applied) applied->version = Named(std::move(applied->version));
  return applied;
}

Result<TaskRecord> PrincipalSessionStore::CreateTask(const NewTask& task) {
  NewTask stored = task;
  if (!task.session_id.empty()) {
    if (auto unreachable = Unreachable(task.session_id)) return *unreachable;
    stored.session_id = Stored(task.session_id);
  }
  ASSIGN_OR_RETURN(TaskRecord record, store_.CreateTask(stored));
  return Named(std::move(record));
}

Result<std::optional<TaskRecord>> PrincipalSessionStore::GetTask(const std::string& task_id,
                                                                 const std::string& owner) {
  ASSIGN_OR_RETURN(std::optional<TaskRecord> record, store_.GetTask(task_id, owner));
  if (record) record = Named(std::move(*record));
  return record;
}

Result<TaskRecord> PrincipalSessionStore::UpdateTask(const TaskUpdate& update) {
  ASSIGN_OR_RETURN(TaskRecord record, store_.UpdateTask(update));
  return Named(std::move(record));
}

Result<TaskPage> PrincipalSessionStore::ListTasks(const std::string& owner,
                                                  const std::optional<std::string>& cursor,
                                                  int limit) {
  ASSIGN_OR_RETURN(TaskPage page, store_.ListTasks(owner, cursor, limit));
  for (TaskRecord& t : page.tasks) t = Named(std::move(t));
  return page;
}

Result<int64_t> PrincipalSessionStore::ReserveSpend(const SpendHold& hold,
                                                    const SpendBudgets& budgets) {
  if (Excluded(hold.session_id)) return UnknownSessionError(hold.session_id);
  return store_.ReserveSpend(StoredHold(hold), budgets);
}

Result<SpendTotals> PrincipalSessionStore::SpendTotalsFor(const SpendHold& hold) {
  return store_.SpendTotalsFor(StoredHold(hold));
}

}  // namespace imgmcp::session
