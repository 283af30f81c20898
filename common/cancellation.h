// A cancellation flag shared between the party that cancels (transport, on
// notifications/cancelled) and the work that checks it (queued edits, backend retries).
#pragma once

#include <atomic>
#include <memory>

namespace imgmcp {

class CancellationToken {
 public:
  CancellationToken() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
  void Cancel() const { flag_->store(true); }
  bool IsCancelled() const { return flag_->load(); }

 private:
  std::shared_ptr<std::atomic<bool>> flag_;  // shared by copies; atomic, no lock needed
};

}  // namespace imgmcp
