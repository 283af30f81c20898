// How often a batch job is read while it runs: pure functions (no clock, no I/O), so the poll
// traffic a job can cause is a number the tests and the docs state. The first read comes
// `first` after the job was created (--batch-poll, 30 s by default); each later interval doubles,
// up to kMaxBatchPollInterval, and every interval is jittered by up to ±kBatchPollJitter of
// itself, so jobs created together do not read together.
#pragma once

#include <chrono>

namespace imgmcp::gemini {

inline constexpr std::chrono::milliseconds kMaxBatchPollInterval{600'000};  // 10 min
inline constexpr double kBatchPollJitter = 0.1;

// The wait before read number `reads_made` + 1 of a job (reads_made = 0: the first read, after
// creation). `unit_random` in [0,1) picks the jitter: 0 the shortest wait, → 1 the longest.
std::chrono::milliseconds BatchPollInterval(std::chrono::milliseconds first, int reads_made,
                                            double unit_random);

// The most reads a job can cause in the `span` after its creation (every wait at its shortest).
int MaxBatchReads(std::chrono::milliseconds first, std::chrono::milliseconds span);

}  // namespace imgmcp::gemini
