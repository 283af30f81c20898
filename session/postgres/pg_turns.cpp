#include "session/postgres/pg_turns.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <utility>

#include "common/log.h"
#include "session/data_dir.h"
#include "session/postgres/log_tag.h"
#include "session/postgres/pg_schema.h"
#include "session/version_rules.h"

namespace imgmcp::session::postgres {
namespace {

constexpr char kTurnsChannel[] = "imgmcp_turns";
constexpr char kCommitsChannel[] = "imgmcp_commits";
constexpr char kTasksChannel[] = "imgmcp_tasks";
constexpr auto kMaxReconnectPause = std::chrono::seconds(2);

const std::string kNamespace = std::to_string(kAdvisoryNamespace);

Error LostTurnError(const std::string& session_id) {
  return MakeError(ErrorCode::kUnavailable,
                   "lost the place in session " + session_id +
                       "'s line: the connection to PostgreSQL was lost; nothing was committed");
}

}  // namespace

// One reservation: drawn on the draw thread, then waited for. Fields guarded by PgTurns::mu_.
struct PgTurns::Draw {
  explicit Draw(std::string id) : session_id(std::move(id)) {}
  const std::string session_id;
  bool drawn = false;      // ticket is set
  bool abandoned = false;  // the reservation was dropped: give the ticket back once drawn
  std::optional<Error> error;
  PgTicket ticket;
};

class PgTurns::Reservation final : public TurnReservation {
 public:
  Reservation(PgTurns* owner, std::shared_ptr<Draw> draw) : owner_(owner), draw_(std::move(draw)) {}
  ~Reservation() override {
    if (draw_ != nullptr) owner_->Abandon(draw_);
  }
  const std::string& session_id() const override { return draw_->session_id; }
  // Ownership of the place moves to the waiting call.
  std::shared_ptr<Draw> Take() { return std::move(draw_); }
  PgTurns* owner() const { return owner_; }

 private:
  PgTurns* owner_;
  std::shared_ptr<Draw> draw_;
};

PgTurns::HeldTurn::~HeldTurn() {
  if (owner_ != nullptr) owner_->Release(ticket_);
}

PgTurns::PgTurns(PgPool& pool, NotificationHandler on_commit, NotificationHandler on_task)
    : pool_(pool), on_commit_(std::move(on_commit)), on_task_(std::move(on_task)) {}

Result<std::unique_ptr<PgTurns>> PgTurns::Start(PgPool& pool, NotificationHandler on_commit,
                                                NotificationHandler on_task) {
  std::unique_ptr<PgTurns> turns(new PgTurns(pool, std::move(on_commit), std::move(on_task)));
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    return MakeError(ErrorCode::kInternal, "cannot create a pipe for the PostgreSQL listener");
  }
  turns->wake_read_.Reset(wake[0]);
  turns->wake_write_.Reset(wake[1]);
  RETURN_IF_ERROR(turns->ConnectListener());
  turns->listen_thread_ = std::thread([t = turns.get()] { t->ListenLoop(); });
  turns->draw_thread_ = std::thread([t = turns.get()] { t->DrawLoop(); });
  return turns;
}

PgTurns::~PgTurns() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
    for (auto& [id, line] : lines_) line->changed.notify_all();
  }
  state_changed_.notify_all();
  jobs_changed_.notify_all();
  if (wake_write_.valid()) (void)!::write(wake_write_.get(), "x", 1);
  shutdown_.request_stop();  // watchers blocked in PostgreSQL return at once
  for (auto& [id, w] : watchers_) {
    if (w->thread.joinable()) w->thread.join();
  }
  if (draw_thread_.joinable()) draw_thread_.join();  // gives back queued tickets first
  if (listen_thread_.joinable()) listen_thread_.join();
}

int64_t PgTurns::replica_id() const {
  MutexLock lock(mu_);
  return replica_id_;
}

// --- The listener ---------------------------------------------------------------------------

Status PgTurns::ConnectListener() {
  ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn,
                   PgConnection::Connect(pool_.conninfo(), pool_.label()));
  RETURN_IF_ERROR(conn->Run(std::string("LISTEN ") + kTurnsChannel + "; LISTEN " + kCommitsChannel +
                                "; LISTEN " + kTasksChannel,
                            "listening for turns and commits"));
  // The id and its liveness lock in one statement: no ticket can carry an id whose lock is not
  // held yet.
  ASSIGN_OR_RETURN(PgResult id,
                   conn->Exec("SELECT id, pg_advisory_lock(" + kNamespace +
                                  ", id::int) FROM (SELECT nextval('imgmcp.replica_ids') AS id) s",
                              {}, "registering this replica"));
  const int64_t replica_id = id.Int(0, 0);
  {
    MutexLock lock(mu_);
    listener_ = std::move(conn);
    replica_id_ = replica_id;
  }
  state_changed_.notify_all();
  log::Debug(kLog, "listening on " + pool_.label() + " as replica " + std::to_string(replica_id));
  return Status::Ok();
}

void PgTurns::ListenLoop() {
  auto pause = std::chrono::milliseconds(50);
  while (true) {
    PgConnection* conn = nullptr;
    {
      MutexLock lock(mu_);
      if (stopping_) return;
      conn = listener_.get();
    }
    if (conn == nullptr) {
      Status st = ConnectListener();
      if (st.ok()) {
        log::Info(kLog, "reconnected to PostgreSQL at " + pool_.label());
        pause = std::chrono::milliseconds(50);
        WakeAll();  // notifications may have been missed: every waiter looks again
        continue;
      }
      log::Debug(kLog, st.error().message);
      MutexLock lock(mu_);  // a pause between attempts, cut short by shutdown
      state_changed_.wait_for(lock, pause, [&] {
        mu_.AssertHeld();
        return stopping_;
      });
      pause = std::min<std::chrono::milliseconds>(pause * 2, kMaxReconnectPause);
      continue;
    }
    pollfd fds[2] = {{conn->Socket(), POLLIN, 0}, {wake_read_.get(), POLLIN, 0}};
    const int ready = ::poll(fds, 2, -1);
    if (ready < 0) continue;  // EINTR
    if (fds[1].revents != 0) {
      char buf[64];
      while (::read(wake_read_.get(), buf, sizeof buf) > 0) {
      }
      continue;  // looks at stopping_
    }
    Status st = conn->ConsumeInput();
    std::vector<std::string> sessions;
    while (std::optional<PgNotification> n = conn->NextNotification()) {
      if (n->channel == kTurnsChannel) {
        sessions.push_back(n->payload);
      } else if (n->channel == kCommitsChannel && on_commit_) {
        on_commit_(n->payload);
      } else if (n->channel == kTasksChannel && on_task_) {
        on_task_(n->payload);
      }
    }
    for (const std::string& s : sessions) Wake(s);
    if (!st.ok()) {
      log::Warn(kLog, st.error().message + "; reconnecting");
      std::unique_ptr<PgConnection> lost;
      {
        MutexLock lock(mu_);
        lost = std::move(listener_);
        replica_id_ = 0;  // our tickets are void: waiters give up (see Wait)
      }
      pool_.DropIdle();  // the server went away: its other connections are gone too
      state_changed_.notify_all();
      WakeAll();
    }
  }
}

void PgTurns::Wake(const std::string& session_id) {
  MutexLock lock(mu_);
  auto it = lines_.find(session_id);
  if (it == lines_.end()) return;
  ++it->second->generation;
  it->second->changed.notify_all();
}

void PgTurns::WakeAll() {
  MutexLock lock(mu_);
  for (auto& [id, line] : lines_) {
    ++line->generation;
    line->changed.notify_all();
  }
}

// --- Drawing and giving back tickets --------------------------------------------------------

std::unique_ptr<TurnReservation> PgTurns::Reserve(const std::string& session_id) {
  auto draw = std::make_shared<Draw>(session_id);
  Enqueue(Job{draw, {}});
  return std::make_unique<Reservation>(this, std::move(draw));
}

void PgTurns::Enqueue(Job job) {
  {
    MutexLock lock(mu_);
    jobs_.push_back(std::move(job));
    ++jobs_enqueued_;
  }
  jobs_changed_.notify_one();
}

void PgTurns::Release(const PgTicket& ticket) { Enqueue(Job{nullptr, ticket}); }

void PgTurns::WaitForDraws() {
  MutexLock lock(mu_);
  const uint64_t enqueued = jobs_enqueued_;
  state_changed_.wait(lock, [&] {
    mu_.AssertHeld();
    return jobs_done_ >= enqueued || stopping_;
  });
}

void PgTurns::Abandon(const std::shared_ptr<Draw>& draw) {
  std::optional<PgTicket> give_back;
  {
    MutexLock lock(mu_);
    draw->abandoned = true;
    if (draw->drawn) give_back = draw->ticket;
  }
  if (give_back) Release(*give_back);
}

void PgTurns::DrawLoop() {
  while (true) {
    std::deque<Job> batch;
    {
      MutexLock lock(mu_);
      jobs_changed_.wait(lock, [&] {
        mu_.AssertHeld();
        return stopping_ || !jobs_.empty();
      });
      if (jobs_.empty()) return;  // stopping, and every ticket given back
      batch.swap(jobs_);
    }
    Result<PgPool::Lease> conn = pool_.Acquire();
    for (const Job& job : batch) {
      if (!conn.ok()) {
        if (job.draw != nullptr) {
          MutexLock lock(mu_);
          job.draw->error = conn.error();
        }
        continue;  // a ticket we cannot give back: its replica id's watchers release it
      }
      if (job.draw != nullptr) {
        RunDraw(**conn, job.draw);
      } else {
        RunRelease(**conn, job.release);
      }
    }
    {
      MutexLock lock(mu_);
      jobs_done_ += batch.size();
    }
    state_changed_.notify_all();
  }
}

void PgTurns::RunDraw(PgConnection& conn, const std::shared_ptr<Draw>& draw) {
  int64_t replica_id = 0;
  {
    MutexLock lock(mu_);
    if (draw->abandoned) return;  // given up before it was drawn
    replica_id = replica_id_;
    if (stopping_) {
      draw->error = MakeError(ErrorCode::kUnavailable, "the session store is closing");
      return;
    }
  }
  if (replica_id == 0) {
    MutexLock lock(mu_);
    draw->error =
        MakeError(ErrorCode::kUnavailable, "not connected to PostgreSQL at " + pool_.label() +
                                               " (reconnecting); nothing was committed");
    return;
  }
  // The session's turn_lines row is locked until this statement commits, so tickets of one
  // session are numbered, and become visible, in the order they are drawn.
  Result<PgResult> r = conn.Exec(
      "WITH l AS (INSERT INTO imgmcp.turn_lines(session_id, next_ticket) VALUES ($1, 1) "
      "ON CONFLICT (session_id) DO UPDATE SET next_ticket = imgmcp.turn_lines.next_ticket + 1 "
      "RETURNING next_ticket) "
      "INSERT INTO imgmcp.turn_tickets(session_id, ticket, replica_id) "
      "SELECT $1, next_ticket, $2 FROM l RETURNING ticket",
      {PgParam::Text(draw->session_id), PgParam::Int(replica_id)}, "drawing a turn ticket");
  std::optional<PgTicket> give_back;
  {
    MutexLock lock(mu_);
    if (!r.ok()) {
      draw->error = r.error();
      return;
    }
    draw->ticket = PgTicket{draw->session_id, r->Int(0, 0), replica_id};
    draw->drawn = true;
    if (draw->abandoned) give_back = draw->ticket;
  }
  if (give_back) RunRelease(conn, *give_back);
}

void PgTurns::RunRelease(PgConnection& conn, const PgTicket& ticket) {
  Result<PgResult> r = conn.Exec(
      "WITH d AS (DELETE FROM imgmcp.turn_tickets WHERE session_id = $1 AND ticket = $2 "
      "RETURNING session_id) SELECT pg_notify('imgmcp_turns', session_id) FROM d",
      {PgParam::Text(ticket.session_id), PgParam::Int(ticket.ticket)}, "giving back a turn");
  if (!r.ok()) {
    // Left behind: once this replica id's listener connection is gone, a watcher removes it.
    log::Warn(kLog, r.error().message);
  }
}

// --- Waiting --------------------------------------------------------------------------------

// The ticket of `draw`, once the draw thread has drawn it.
Result<PgTicket> PgTurns::AwaitDraw(const std::shared_ptr<Draw>& draw, std::stop_token cancel) {
  MutexLock lock(mu_);
  const auto drawn = [&] {
    mu_.AssertHeld();
    return draw->drawn || draw->error.has_value();
  };
  if (!state_changed_.wait(lock, cancel, drawn)) {
    return MakeError(ErrorCode::kCancelled,
                     "cancelled while waiting for session " + draw->session_id + "'s line");
  }
  if (draw->error.has_value()) return *draw->error;
  return draw->ticket;  // immutable once drawn
}

// The tickets ahead of `ticket` in its line, as (ticket, replica id), oldest first.
Result<std::vector<std::pair<int64_t, int64_t>>> PgTurns::TicketsAhead(const PgTicket& ticket,
                                                                       std::stop_token cancel) {
  ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire(cancel));
  ASSIGN_OR_RETURN(
      PgResult rows,
      conn->Exec("SELECT ticket, replica_id FROM imgmcp.turn_tickets WHERE session_id = $1 AND "
                 "ticket <= $2 ORDER BY ticket",
                 {PgParam::Text(ticket.session_id), PgParam::Int(ticket.ticket)},
                 "looking at a turn line"));
  const int n = rows.Rows();
  if (n == 0 || rows.Int(n - 1, 0) != ticket.ticket || rows.Int(n - 1, 1) != ticket.replica_id) {
    return LostTurnError(ticket.session_id);  // our ticket was released as a dead replica's
  }
  std::vector<std::pair<int64_t, int64_t>> ahead;
  for (int i = 0; i + 1 < n; ++i) ahead.emplace_back(rows.Int(i, 0), rows.Int(i, 1));
  return ahead;
}

// One waiter in a session's line of this process: the line exists while it has waiters.
class PgTurns::LineMembership {
 public:
  LineMembership(PgTurns* turns, std::string session_id)
      : turns_(turns), session_id_(std::move(session_id)) {
    MutexLock lock(turns_->mu_);
    std::unique_ptr<Line>& slot = turns_->lines_[session_id_];
    if (!slot) slot = std::make_unique<Line>();
    line_ = slot.get();
    ++line_->waiters;
  }
  ~LineMembership() {
    MutexLock lock(turns_->mu_);
    auto it = turns_->lines_.find(session_id_);
    if (it != turns_->lines_.end() && --it->second->waiters == 0) turns_->lines_.erase(it);
  }
  Line& line() { return *line_; }

 private:
  PgTurns* const turns_;
  const std::string session_id_;
  Line* line_ = nullptr;  // guarded by turns_->mu_; alive while this membership is
};

// Waits until no ticket is ahead of `ticket`: looks at the line, reports what the caller asked
// for, then sleeps until the line changes (a release, a reconnect, shutdown) or the cancel.
Status PgTurns::AwaitFront(const PgTicket& ticket, const TurnOptions& options) {
  LineMembership membership(this, ticket.session_id);
  Line& line = membership.line();
  int reported_ahead = -1;
  bool reported_other = false;
  while (true) {
    uint64_t generation = 0;
    {
      MutexLock lock(mu_);
      if (stopping_) return MakeError(ErrorCode::kUnavailable, "the session store is closing");
      if (replica_id_ != ticket.replica_id) return LostTurnError(ticket.session_id);
      generation = line.generation;
    }
    if (options.cancel.stop_requested()) {
      return MakeError(ErrorCode::kCancelled,
                       "cancelled while queued in session " + ticket.session_id + "'s line");
    }
    ASSIGN_OR_RETURN(auto ahead, TicketsAhead(ticket, options.cancel));
    if (ahead.empty()) return Status::Ok();
    std::set<int64_t> others;
    for (const auto& [t, replica] : ahead) {
      if (replica != ticket.replica_id) others.insert(replica);
    }
    for (int64_t other : others) EnsureWatcher(other);
    if (!others.empty() && !std::exchange(reported_other, true) && options.on_other_process) {
      options.on_other_process();
    }
    const int n_ahead = static_cast<int>(ahead.size());
    if (n_ahead != std::exchange(reported_ahead, n_ahead) && options.on_queued) {
      options.on_queued(n_ahead);
    }
    MutexLock lock(mu_);
    line.changed.wait(lock, options.cancel, [&] {
      mu_.AssertHeld();
      return line.generation != generation || stopping_ || replica_id_ != ticket.replica_id;
    });
  }
}

Result<PgTurns::HeldTurn> PgTurns::Wait(std::unique_ptr<TurnReservation> reservation,
                                        const TurnOptions& options) {
  auto* mine = dynamic_cast<Reservation*>(reservation.get());
  if (mine == nullptr || mine->owner() != this) {
    return MakeError(ErrorCode::kInternal, "a turn reservation from another store was used");
  }
  std::shared_ptr<Draw> draw = mine->Take();
  // From here the place is ours: give it back on every way out but success.
  struct GiveBack {
    PgTurns* self;
    std::shared_ptr<Draw> draw;
    ~GiveBack() {
      if (draw != nullptr) self->Abandon(draw);
    }
  } give_back{this, draw};
  reservation.reset();

  ASSIGN_OR_RETURN(PgTicket ticket, AwaitDraw(draw, options.cancel));
  RETURN_IF_ERROR(AwaitFront(ticket, options));
  if (options.cancel.stop_requested()) {
    return MakeError(ErrorCode::kCancelled, "cancelled before the edit started");
  }
  give_back.draw.reset();  // the HeldTurn gives it back now
  return HeldTurn(this, ticket);
}

// --- Watchers of other replicas -------------------------------------------------------------

void PgTurns::ReapWatchers() {
  std::vector<std::unique_ptr<Watcher>> finished;
  {
    MutexLock lock(mu_);
    for (auto it = watchers_.begin(); it != watchers_.end();) {
      if (it->second->done) {
        finished.push_back(std::move(it->second));
        it = watchers_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& w : finished) {
    if (w->thread.joinable()) w->thread.join();
  }
}

void PgTurns::EnsureWatcher(int64_t replica_id) {
  ReapWatchers();
  MutexLock lock(mu_);
  if (stopping_ || watchers_.count(replica_id) != 0) return;
  auto watcher = std::make_unique<Watcher>();
  Watcher* w = watcher.get();
  watchers_[replica_id] = std::move(watcher);
  w->thread = std::thread([this, replica_id] { Watch(replica_id); });
}

// Blocks until `replica_id`'s listener connection is gone (its lock can be shared), then
// releases that replica's tickets.
void PgTurns::Watch(int64_t replica_id) {
  auto finish = [&] {
    {
      MutexLock lock(mu_);
      auto it = watchers_.find(replica_id);
      if (it != watchers_.end()) it->second->done = true;
    }
    state_changed_.notify_all();
  };
  Result<std::unique_ptr<PgConnection>> connected =
      PgConnection::Connect(pool_.conninfo(), pool_.label());
  if (!connected.ok()) {
    log::Debug(kLog, "cannot watch replica " + std::to_string(replica_id) + ": " +
                         connected.error().message);
    return finish();
  }
  std::unique_ptr<PgConnection> conn = std::move(*connected);
  const std::vector<PgParam> key = {PgParam::Int(replica_id)};
  Result<PgResult> locked =
      conn->ExecUntilStopped("SELECT pg_advisory_lock_shared(" + kNamespace + ", $1::int)", key,
                             "watching a replica", shutdown_.get_token());
  bool stopped = false;
  {
    MutexLock lock(mu_);
    stopped = stopping_;
  }
  if (!locked.ok() || stopped) {
    if (!locked.ok()) log::Debug(kLog, locked.error().message);
    return finish();
  }
  Result<PgResult> released = conn->Exec(
      "WITH d AS (DELETE FROM imgmcp.turn_tickets WHERE replica_id = $1 RETURNING session_id) "
      "SELECT s, pg_notify('imgmcp_turns', s) FROM (SELECT DISTINCT session_id AS s FROM d) x",
      key, "releasing the turns of a replica that is gone");
  if (released.ok() && released->Rows() > 0) {
    log::Info(kLog, "replica " + std::to_string(replica_id) +
                        " lost its PostgreSQL connection; released its place in " +
                        std::to_string(released->Rows()) + " session line(s)");
  } else if (!released.ok()) {
    log::Warn(kLog, released.error().message);
  }
  (void)conn->Exec("SELECT pg_advisory_unlock_shared(" + kNamespace + ", $1::int)", key,
                   "ending a watch");
  finish();
}

}  // namespace imgmcp::session::postgres
