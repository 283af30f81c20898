#include "gemini_client/sleeper.h"

#include <algorithm>
#include <thread>

namespace imgmcp::gemini {

std::chrono::steady_clock::time_point RealSleeper::Now() const {
  return std::chrono::steady_clock::now();
}

bool RealSleeper::SleepFor(std::chrono::milliseconds duration, const CancellationToken& cancel) {
  const auto end = std::chrono::steady_clock::now() + duration;
  while (!cancel.IsCancelled()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= end) return true;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(end - now, kPollInterval));
  }
  return false;
}

}  // namespace imgmcp::gemini
