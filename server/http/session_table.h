// The Streamable HTTP transport's table of live sessions by Mcp-Session-Id, with idle expiry
// measured on an injected Clock (so tests control time). Thread-safe. When it is full, a new
// session evicts the one idle longest, so whoever opens sessions in a loop cannot lock other
// clients out (an evicted client gets 404 and initializes again, as the protocol says).
//
// `Session` needs `bool Busy() const`: a busy session (an open stream, a call in flight) is never
// idle — being busy counts as activity.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/thread_annotations.h"
#include "metrics/metrics.h"

namespace imgmcp::http {

template <typename Session>
class SessionTable {
 public:
  // `metrics` (may be null) is told the number of sessions after every change.
  SessionTable(const Clock& clock, std::chrono::steady_clock::duration idle_timeout,
               size_t max_sessions, metrics::Metrics* metrics = nullptr)
      : clock_(clock),
        idle_timeout_(idle_timeout),
        max_sessions_(max_sessions),
        metrics_(metrics) {}

  struct Insertion {
    bool inserted = false;
    std::shared_ptr<Session> evicted;  // made room; the caller ends it outside the table's lock
  };
  // Not inserted only when the table is full of busy sessions (the caller answers 503).
  Insertion Insert(const std::string& id, std::shared_ptr<Session> session) {
    Insertion result;
    MutexLock lock(mu_);
    if (entries_.size() >= max_sessions_) {
      auto idlest = entries_.end();
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (it->second.session->Busy()) continue;
        if (idlest == entries_.end() || it->second.last_used < idlest->second.last_used) {
          idlest = it;
        }
      }
      if (idlest == entries_.end()) return result;
      result.evicted = std::move(idlest->second.session);
      entries_.erase(idlest);
    }
    entries_[id] = Entry{std::move(session), clock_.SteadyNow()};
    result.inserted = true;
    Publish();
    return result;
  }

  // The session, marked as used now; nullptr when unknown, expired or removed.
  std::shared_ptr<Session> Find(const std::string& id) {
    MutexLock lock(mu_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return nullptr;
    it->second.last_used = clock_.SteadyNow();
    return it->second.session;
  }

  // Removes and returns the session (nullptr when unknown).
  std::shared_ptr<Session> Remove(const std::string& id) {
    MutexLock lock(mu_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return nullptr;
    std::shared_ptr<Session> session = std::move(it->second.session);
    entries_.erase(it);
    Publish();
    return session;
  }

  // Removes and returns the sessions that were neither used nor busy for the idle timeout. The
  // caller ends them outside the table's lock.
  std::vector<std::shared_ptr<Session>> TakeExpired() {
    std::vector<std::shared_ptr<Session>> expired;
    MutexLock lock(mu_);
    const auto now = clock_.SteadyNow();
    for (auto it = entries_.begin(); it != entries_.end();) {
      Entry& entry = it->second;
      if (entry.session->Busy()) {
        entry.last_used = now;
      } else if (now - entry.last_used >= idle_timeout_) {
        expired.push_back(std::move(entry.session));
        it = entries_.erase(it);
        continue;
      }
      ++it;
    }
    Publish();
    return expired;
  }

  // Every session, left in the table.
  std::vector<std::shared_ptr<Session>> All() const {
    std::vector<std::shared_ptr<Session>> all;
    MutexLock lock(mu_);
    for (const auto& [id, entry] : entries_) all.push_back(entry.session);
    return all;
  }

  std::vector<std::shared_ptr<Session>> TakeAll() {
    std::vector<std::shared_ptr<Session>> all;
    MutexLock lock(mu_);
    for (auto& [id, entry] : entries_) all.push_back(std::move(entry.session));
    entries_.clear();
    Publish();
    return all;
  }

  size_t size() const {
    MutexLock lock(mu_);
    return entries_.size();
  }

 private:
  // Under mu_.
  void Publish() const REQUIRES(mu_) {
    if (metrics_ != nullptr) metrics_->SetOpenHttpSessions(static_cast<int64_t>(entries_.size()));
  }

  struct Entry {
    std::shared_ptr<Session> session;
    std::chrono::steady_clock::time_point last_used;
  };

  const Clock& clock_;
  const std::chrono::steady_clock::duration idle_timeout_;
  const size_t max_sessions_;
  metrics::Metrics* const metrics_;
  mutable Mutex mu_;  // guards entries_
  std::map<std::string, Entry> entries_ GUARDED_BY(mu_);
};

}  // namespace imgmcp::http
