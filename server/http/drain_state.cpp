#include "server/http/drain_state.h"

namespace imgmcp::http {

std::shared_ptr<void> DrainState::Busy() {
  busy_.fetch_add(1);
  // A token with no object: its deleter is what matters.
  return std::shared_ptr<void>(nullptr, [this](void*) { busy_.fetch_sub(1); });
}

}  // namespace imgmcp::http
