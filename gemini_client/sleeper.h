// Time seam for the retry loop: what time it is and how to wait. Tests pass a fake that records
// waits and advances its clock instantly; production uses RealSleeper.
#pragma once

#include <chrono>

#include "common/cancellation.h"

namespace imgmcp::gemini {

class Sleeper {
 public:
  virtual ~Sleeper() = default;
  virtual std::chrono::steady_clock::time_point Now() const = 0;
  // Waits for `duration`, returning false as soon as `cancel` fires (true when the wait completed).
  virtual bool SleepFor(std::chrono::milliseconds duration, const CancellationToken& cancel) = 0;
};

// Real time. CancellationToken has no wake-up hook, so the wait polls it every few milliseconds;
// a cancel is noticed within kPollInterval.
class RealSleeper final : public Sleeper {
 public:
  static constexpr std::chrono::milliseconds kPollInterval{5};
  std::chrono::steady_clock::time_point Now() const override;
  bool SleepFor(std::chrono::milliseconds duration, const CancellationToken& cancel) override;
};

}  // namespace imgmcp::gemini
