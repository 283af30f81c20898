#include "common/slot_limiter.h"

namespace imgmcp {

bool SlotLimiter::Run(std::stop_token stop, const std::function<void()>& fn) {
  {
    std::unique_lock lock(mu_);
    if (!freed_.wait(lock, stop, [&] { return limit_ <= 0 || in_use_ < limit_; })) return false;
    if (stop.stop_requested()) return false;
    ++in_use_;
  }
  struct Release {
    SlotLimiter* self;
    ~Release() {
      {
        std::lock_guard lock(self->mu_);
        --self->in_use_;
      }
      self->freed_.notify_one();
    }
  } release{this};
  fn();
  return true;
}

int SlotLimiter::InUse() const {
  std::lock_guard lock(mu_);
  return in_use_;
}

}  // namespace imgmcp
