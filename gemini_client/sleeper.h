// Time seam for the retry loop: what time it is and how to wait. Tests pass a fake that records
// waits and advances its clock instantly; production uses RealSleeper.
#pragma once

#include <chrono>
#include <stop_token>

namespace imgmcp::gemini {

class Sleeper {
 public:
  virtual ~Sleeper() = default;
  virtual std::chrono::steady_clock::time_point Now() const = 0;
  // Waits for `duration`, returning false as soon as `cancel` fires (true when the wait completed).
  virtual bool SleepFor(std::chrono::milliseconds duration, std::stop_token cancel) = 0;
};

// Real time; a stop of the token wakes the wait at once.
class RealSleeper final : public Sleeper {
 public:
  std::chrono::steady_clock::time_point Now() const override;
  bool SleepFor(std::chrono::milliseconds duration, std::stop_token cancel) override;
};

}  // namespace imgmcp::gemini
