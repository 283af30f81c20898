#include "common/slot_limiter.h"

namespace imgmcp {

bool SlotLimiter::Run(std::stop_token stop, const std::function<void()>& fn) {
  {
    MutexLock lock(mu_);
    const auto has_slot = [&] {
      mu_.AssertHeld();
      return limit_ <= 0 || in_use_ < limit_;
    };
    if (!freed_.wait(lock, stop, has_slot)) return false;
    if (stop.stop_requested()) return false;
    ++in_use_;
  }
  struct Release {
    SlotLimiter* self;
    ~Release() {
      {
        MutexLock lock(self->mu_);
        --self->in_use_;
      }
      self->freed_.notify_one();
    }
  } release{this};
  fn();
  return true;
}

int SlotLimiter::InUse() const {
  MutexLock lock(mu_);
  return in_use_;
}

}  // namespace imgmcp
