#include "gemini_client/sleeper.h"

#include "common/cancellation.h"

namespace imgmcp::gemini {

std::chrono::steady_clock::time_point RealSleeper::Now() const {
  return std::chrono::steady_clock::now();
}

bool RealSleeper::SleepFor(std::chrono::milliseconds duration, std::stop_token cancel) {
  return SleepUnlessStopped(duration, cancel);
}

}  // namespace imgmcp::gemini
