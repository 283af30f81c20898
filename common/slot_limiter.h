// A counting semaphore with a run-time limit (the image tools cap concurrent backend calls with
// it).
#pragma once

#include <condition_variable>
#include <functional>
#include <stop_token>

#include "common/thread_annotations.h"

namespace imgmcp {

class SlotLimiter {
 public:
  // limit <= 0 means unlimited.
  explicit SlotLimiter(int limit) : limit_(limit) {}
  SlotLimiter(const SlotLimiter&) = delete;
  SlotLimiter& operator=(const SlotLimiter&) = delete;

  // Waits for a free slot, runs fn, frees the slot (also if fn throws). A stop of `stop` before a
  // slot is free ends the wait without running fn: false then.
  bool Run(std::stop_token stop, const std::function<void()>& fn);
  void Run(const std::function<void()>& fn) { Run(std::stop_token(), fn); }
  int InUse() const;

 private:
  const int limit_;
  mutable Mutex mu_;  // guards in_use_
  std::condition_variable_any freed_;
  int in_use_ GUARDED_BY(mu_) = 0;
};

}  // namespace imgmcp
