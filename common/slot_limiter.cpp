#include "common/slot_limiter.h"

namespace imgmcp {

void SlotLimiter::Run(const std::function<void()>& fn) {
  {
    std::unique_lock lock(mu_);
    freed_.wait(lock, [&] { return limit_ <= 0 || in_use_ < limit_; });
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
}

int SlotLimiter::InUse() const {
  std::lock_guard lock(mu_);
  return in_use_;
}

}  // namespace imgmcp
