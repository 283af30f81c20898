// Turns on sessions shared by every replica on one PostgreSQL database (docs/design.md §3).
//
// A turn is a ticket: a row (session_id, ticket, replica_id) in imgmcp.turn_tickets. Tickets of a
// session are numbered in the order they are drawn (the draw locks the session's turn_lines row,
// so numbers and commits of draws follow one order), and the holder of a session's smallest
// ticket has the turn. So turns are granted in arrival order across replicas and exclusively.
//
// Waiting is woken, not polled: a turn ends by deleting its ticket and NOTIFY imgmcp_turns
// '<session_id>' in the same transaction; each replica LISTENs on one connection (the listener)
// and wakes its waiters of that session, which look at the line again.
//
// A replica that dies must not wedge a session. Each replica's listener connection holds the
// advisory lock (kAdvisoryNamespace, replica id) for as long as it lives; PostgreSQL drops it
// when the connection goes (a killed process, a lost network). A waiter that finds another
// replica's ticket ahead of it starts a watcher for that replica: a connection blocked in
// pg_advisory_lock_shared on that lock, which returns only when the replica is gone; the watcher
// then deletes the replica's tickets and notifies their sessions. So a dead replica's turns are
// released within moments, and nobody polls. A replica whose listener connection is lost (say
// PostgreSQL restarted) gets a new replica id when it reconnects; its waiting calls fail with a
// clear error, and a commit by a turn whose ticket is gone is refused (see PgTicketCheck).
//
// Reservations are drawn on a background thread, in the order Reserve was called, so Reserve never
// blocks (the protocol core calls it on its reading thread).
//
// Every wait is woken: a waiter sleeps on its line's condition variable until a notification, a
// reconnect, shutdown or its own stop token; a watcher's blocking statement ends when PostgreSQL
// answers it or when shutdown requests a stop (ExecUntilStopped).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "common/thread_annotations.h"
#include "common/unique_fd.h"
#include "session/postgres/pg_connection.h"
#include "session/session_store.h"

namespace imgmcp::session::postgres {

// Which ticket a held turn is: the commit checks (FOR SHARE) that it still exists.
struct PgTicket {
  std::string session_id;
  int64_t ticket = 0;
  int64_t replica_id = 0;
};

class PgTurns {
 public:
  using NotificationHandler = std::function<void(const std::string& payload)>;

  // Connects the listener (LISTEN, replica id, liveness lock) and starts the threads.
  // `on_commit` receives the payload of every imgmcp_commits notification, on the listener
  // thread; `on_task` (optional) that of every imgmcp_tasks notification.
  static Result<std::unique_ptr<PgTurns>> Start(PgPool& pool, NotificationHandler on_commit,
                                                NotificationHandler on_task = nullptr);
  // Gives back the tickets of this replica and stops every thread.
  ~PgTurns();
  PgTurns(const PgTurns&) = delete;
  PgTurns& operator=(const PgTurns&) = delete;

  // A place in `session_id`'s line, drawn in call order on the background thread. Never blocks.
  std::unique_ptr<TurnReservation> Reserve(const std::string& session_id);
  // Returns once every reservation made before this call is drawn (its ticket is in the table,
  // so a later draw on any replica comes after it) or has failed. What a caller answers after it
  // (a task's creation) cannot overtake the place the call reserved.
  void WaitForDraws();

  // The turn of a reservation made by Reserve: gives it back when destroyed.
  class HeldTurn {
   public:
    HeldTurn(PgTurns* owner, PgTicket ticket) : owner_(owner), ticket_(std::move(ticket)) {}
    HeldTurn(HeldTurn&& other) noexcept : owner_(other.owner_), ticket_(std::move(other.ticket_)) {
      other.owner_ = nullptr;
    }
    HeldTurn& operator=(HeldTurn&&) = delete;
    ~HeldTurn();
    const PgTicket& ticket() const { return ticket_; }

   private:
    PgTurns* owner_;
    PgTicket ticket_;
  };

  // Waits for the reservation's turn, in ticket order, honouring options (a stop of
  // options.cancel ends the wait at once; on_queued with the number of turns ahead,
  // on_other_process once when one of them is another replica's). kInternal for a reservation of
  // another store.
  Result<HeldTurn> Wait(std::unique_ptr<TurnReservation> reservation, const TurnOptions& options);

  // This replica's id while connected (0 while the listener reconnects).
  int64_t replica_id() const;

 private:
  struct Draw;  // one reservation's state
  class Reservation;
  class LineMembership;
  // Line, Watcher and Draw (pg_turns.cpp) are guarded by mu_ too, which the analysis cannot check
  // on their fields (it names no mutex of another object): they are touched only with mu_ held.
  struct Line {
    uint64_t generation = 0;
    std::condition_variable_any changed;
    int waiters = 0;
  };
  struct Watcher {
    std::thread thread;
    bool done = false;
  };
  struct Job {
    std::shared_ptr<Draw> draw;  // a draw, or (when null) a release of `release`
    PgTicket release;
  };

  PgTurns(PgPool& pool, NotificationHandler on_commit, NotificationHandler on_task);
  Status ConnectListener();
  void ListenLoop();
  void DrawLoop();
  void RunDraw(PgConnection& conn, const std::shared_ptr<Draw>& draw);
  void RunRelease(PgConnection& conn, const PgTicket& ticket);
  void Enqueue(Job job);
  void Release(const PgTicket& ticket);
  void Abandon(const std::shared_ptr<Draw>& draw);
  // The steps of Wait.
  Result<PgTicket> AwaitDraw(const std::shared_ptr<Draw>& draw, std::stop_token cancel);
  Status AwaitFront(const PgTicket& ticket, const TurnOptions& options);
  Result<std::vector<std::pair<int64_t, int64_t>>> TicketsAhead(const PgTicket& ticket,
                                                                std::stop_token cancel);
  void Wake(const std::string& session_id);
  void WakeAll();
  void EnsureWatcher(int64_t replica_id);
  void Watch(int64_t replica_id);
  void ReapWatchers();

  PgPool& pool_;
  const NotificationHandler on_commit_;
  const NotificationHandler on_task_;
  UniqueFd wake_read_;   // a pipe that wakes the listener's poll (shutdown): its read end
  UniqueFd wake_write_;  // and its write end

  std::stop_source shutdown_;  // requested by the destructor: ends the watchers' statements

  mutable Mutex mu_;  // guards every field below up to the threads, and every Line, Watcher, Draw
  std::condition_variable_any state_changed_;  // a draw finished, the epoch changed, stopping
  bool stopping_ GUARDED_BY(mu_) = false;
  int64_t replica_id_ GUARDED_BY(mu_) = 0;  // 0 while disconnected
  // Used by the listener thread only, once started.
  std::unique_ptr<PgConnection> listener_ GUARDED_BY(mu_);
  std::deque<Job> jobs_ GUARDED_BY(mu_);        // for the draw thread, in order
  uint64_t jobs_enqueued_ GUARDED_BY(mu_) = 0;  // ever put in jobs_
  uint64_t jobs_done_ GUARDED_BY(mu_) = 0;      // ever finished by the draw thread
  std::condition_variable_any jobs_changed_;
  // Lines with waiters.
  std::unordered_map<std::string, std::unique_ptr<Line>> lines_ GUARDED_BY(mu_);
  // By watched replica id.
  std::map<int64_t, std::unique_ptr<Watcher>> watchers_ GUARDED_BY(mu_);

  // Set by Start, joined by the destructor.
  std::thread listen_thread_;
  std::thread draw_thread_;
};

}  // namespace imgmcp::session::postgres
