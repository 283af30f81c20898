// The session store's task announcements (SessionStore::SetTaskListener, session/session_store.h:
// PostgreSQL's NOTIFY imgmcp_tasks) as the protocol core's TaskWatch (mcp/task_watch.h), so
// a listener on any replica hears of a task that runs on another.
//
// The store reports on its notification thread, which also wakes the waiters of session turns, so
// a report is only queued there; the watch's own thread reads the row (GetTask, with the owner the
// store announced) when the listener asks for it. A task announced again before its report ran is
// reported once: the read shows its newest state anyway.
#pragma once

#include <condition_variable>
#include <deque>
#include <set>
#include <stop_token>
#include <string>
#include <thread>

#include "common/thread_annotations.h"
#include "mcp/task_watch.h"
#include "server/tools/store_task_ledger.h"
#include "session/session_store.h"

namespace imgmcp::tools {

class StoreTaskWatch final : public mcp::TaskWatch {
 public:
  // `store` and `ledger` (which shows a row as tasks/get does) must outlive the watch.
  StoreTaskWatch(session::SessionStore& store, const StoreTaskLedger& ledger)
      : store_(store), ledger_(ledger) {}
  ~StoreTaskWatch() override;  // SetListener(nullptr)
  StoreTaskWatch(const StoreTaskWatch&) = delete;
  StoreTaskWatch& operator=(const StoreTaskWatch&) = delete;

  void SetListener(Listener listener) override;

  // Changes waiting at most; beyond it the oldest is dropped (with a warning): a listener that
  // fell that far behind reads the rows polled anyway.
  static constexpr size_t kMaxQueued = 4096;

 private:
  void Enqueue(const session::TaskChange& change);  // on the store's thread
  void Loop(std::stop_token stop);                  // the watch's thread, until `stop`
  std::optional<mcp::TaskSnapshot> Read(const session::TaskChange& change);

  session::SessionStore& store_;
  const StoreTaskLedger& ledger_;
  Mutex set_mu_;  // serialises SetListener (held while it starts or joins thread_)
  std::jthread thread_ GUARDED_BY(set_mu_);  // runs Loop while a listener is set
  Mutex mu_;                                 // guards everything below
  std::condition_variable_any cv_;           // signalled when queue_ grows
  Listener listener_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;  // no listener: reports are not queued
  std::deque<session::TaskChange> queue_ GUARDED_BY(mu_);
  std::set<std::string> queued_ids_ GUARDED_BY(mu_);  // the task ids in queue_
};

}  // namespace imgmcp::tools
