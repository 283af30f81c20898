#include "server/http/drain_state.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace imgmcp::http {

DrainState::DrainState()
    : last_request_ns_(Now()), idle_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

std::shared_ptr<void> DrainState::Busy() {
  busy_.fetch_add(1);
  // A token with no object: its deleter is what matters.
  return std::shared_ptr<void>(nullptr, [this](void*) {
    if (busy_.fetch_sub(1) != 1 || !idle_.valid()) return;
    const uint64_t one = 1;
    (void)!::write(idle_.get(), &one, sizeof one);
  });
}

}  // namespace imgmcp::http
