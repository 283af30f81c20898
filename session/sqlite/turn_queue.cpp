#include "session/sqlite/turn_queue.h"

#include <algorithm>

namespace imgmcp::session::sqlite {

TurnQueue::Ticket::~Ticket() {
  if (queue_ != nullptr) queue_->Leave(session_id_, number_);
}

TurnQueue::Ticket TurnQueue::Draw(const std::string& session_id) {
  MutexLock lock(mu_);
  std::unique_ptr<Line>& slot = lines_[session_id];
  if (!slot) slot = std::make_unique<Line>();
  const uint64_t number = slot->next_ticket++;
  slot->tickets.push_back(number);
  return Ticket(this, session_id, number);
}

Result<TurnQueue::Ticket> TurnQueue::Enter(const std::string& session_id, std::stop_token cancel,
                                           const std::function<void(int ahead)>& on_queued) {
  Ticket ticket = Draw(session_id);
  RETURN_IF_ERROR(Wait(ticket, cancel, on_queued));
  return ticket;
}

Status TurnQueue::Wait(const Ticket& ticket, std::stop_token cancel,
                       const std::function<void(int ahead)>& on_queued) {
  const std::string& session_id = ticket.session_id_;
  const uint64_t number = ticket.number_;
  MutexLock lock(mu_);
  Line* line = lines_.at(session_id).get();  // stays alive while the ticket is in it
  int reported = -1;
  while (true) {
    const auto it = std::find(line->tickets.begin(), line->tickets.end(), number);
    const int ahead = static_cast<int>(it - line->tickets.begin());
    if (ahead == 0) return Status::Ok();
    if (cancel.stop_requested()) {
      // The caller's ticket leaves the line when it is destroyed.
      return MakeError(ErrorCode::kCancelled, "cancelled while queued behind " +
                                                  std::to_string(ahead) + " edit(s) of session " +
                                                  session_id);
    }
    if (ahead != reported && on_queued) {
      reported = ahead;
      lock.unlock();
      on_queued(ahead);
      lock.lock();
      continue;  // the line may have moved during the callback
    }
    reported = ahead;
    const uint64_t seen = line->departures;
    line->changed.wait(lock, cancel, [&] {
      mu_.AssertHeld();
      return line->departures != seen;
    });
  }
}

void TurnQueue::Leave(const std::string& session_id, uint64_t number) {
  MutexLock lock(mu_);
  auto found = lines_.find(session_id);
  if (found == lines_.end()) return;
  Line& line = *found->second;
  const auto it = std::find(line.tickets.begin(), line.tickets.end(), number);
  if (it != line.tickets.end()) line.tickets.erase(it);
  ++line.departures;
  if (line.tickets.empty()) {
    lines_.erase(found);  // nobody waits on it: every waiter has a ticket in it
  } else {
    line.changed.notify_all();
  }
}

int TurnQueue::LineLength(const std::string& session_id) const {
  MutexLock lock(mu_);
  const auto found = lines_.find(session_id);
  return found == lines_.end() ? 0 : static_cast<int>(found->second->tickets.size());
}

}  // namespace imgmcp::session::sqlite
