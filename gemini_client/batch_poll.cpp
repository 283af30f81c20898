#include "gemini_client/batch_poll.h"

#include <algorithm>

namespace imgmcp::gemini {

std::chrono::milliseconds BatchPollInterval(std::chrono::milliseconds first, int reads_made,
                                            double unit_random) {
  first = std::clamp(first, std::chrono::milliseconds(1), kMaxBatchPollInterval);
  std::chrono::milliseconds base = first;
  for (int i = 0; i < reads_made && base < kMaxBatchPollInterval; ++i) base *= 2;
  base = std::min(base, kMaxBatchPollInterval);
  const double jitter = (std::clamp(unit_random, 0.0, 1.0) * 2 - 1) * kBatchPollJitter;
  return std::chrono::milliseconds(
      static_cast<int64_t>(static_cast<double>(base.count()) * (1 + jitter)));
}

int MaxBatchReads(std::chrono::milliseconds first, std::chrono::milliseconds span) {
  int reads = 0;
  std::chrono::milliseconds at{0};
  while (true) {
    at += BatchPollInterval(first, reads, 0);
    if (at > span) return reads;
    ++reads;
  }
}

}  // namespace imgmcp::gemini
