// In-process FIFO turns per session: every caller draws a ticket in arrival order and waits until
// all earlier tickets of the same session have left. Unlike a bare mutex this is fair — edits run
// in the order they arrived. Sessions are independent. Cancellation leaves the queue without
// disturbing anyone else.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <unordered_map>

#include "common/result.h"
#include "common/thread_annotations.h"

namespace imgmcp::session::sqlite {

class TurnQueue {
 public:
  // Held while it is this caller's turn; destroying it lets the next ticket in.
  class Ticket {
   public:
    Ticket(Ticket&& other) noexcept
        : queue_(other.queue_), session_id_(std::move(other.session_id_)), number_(other.number_) {
      other.queue_ = nullptr;
    }
    Ticket& operator=(Ticket&&) = delete;
    Ticket(const Ticket&) = delete;
    ~Ticket();
    uint64_t number() const { return number_; }

   private:
    friend class TurnQueue;
    Ticket(TurnQueue* queue, std::string session_id, uint64_t number)
        : queue_(queue), session_id_(std::move(session_id)), number_(number) {}
    TurnQueue* queue_;
    std::string session_id_;
    uint64_t number_;
  };

  // Waiters are woken at once by a release ahead of them and by a stop of their token.
  TurnQueue() = default;
  TurnQueue(const TurnQueue&) = delete;
  TurnQueue& operator=(const TurnQueue&) = delete;

  // Draws a ticket now, without waiting: its place in the line is fixed at this moment. Destroying
  // the ticket (before or after its turn came) leaves the line.
  Ticket Draw(const std::string& session_id);
  // Waits until `ticket` is at the front of its line, with on_queued/cancellation as for Enter.
  Status Wait(const Ticket& ticket, std::stop_token cancel,
              const std::function<void(int ahead)>& on_queued);

  // Draws a ticket and waits for the turn. While waiting, calls on_queued(ahead) (outside any
  // lock) first and whenever the number of tickets ahead changes. kCancelled when `cancel` fires
  // before the turn comes.
  Result<Ticket> Enter(const std::string& session_id, std::stop_token cancel,
                       const std::function<void(int ahead)>& on_queued);

  // Tickets (holder + waiters) currently in `session_id`'s line.
  int LineLength(const std::string& session_id) const;

 private:
  struct Line {
    uint64_t next_ticket = 0;
    std::deque<uint64_t> tickets;  // front = the holder of the turn
    uint64_t departures = 0;       // tickets that left; a waiter wakes when it moves
    std::condition_variable_any changed;
  };
  void Leave(const std::string& session_id, uint64_t number);

  // Guards lines_ and every Line in it (the analysis checks lines_; a Line's fields are touched
  // only through it, with mu_ held).
  mutable Mutex mu_;
  std::unordered_map<std::string, std::unique_ptr<Line>> lines_ GUARDED_BY(mu_);  // non-empty
};

}  // namespace imgmcp::session::sqlite
