// How imgmcp sets up glibc's allocator: a bound on its arenas, a larger per-thread cache for the
// HTTP server's workers, and handing freed memory back to the operating system. The figures these
// settings were chosen by are bench/RESULTS.md's P6 and M2–M4.
#pragma once

#include <string>

namespace imgmcp {

// Bounds what the allocator keeps between calls; called once at start-up, before any thread.
// glibc gives threads their own arenas (up to 8 a core), each keeping the high-water mark of the
// calls that ran on it: 60 edits importing 4.3 MB each over HTTP, one at a time, left over 500 MB
// resident. A few arenas keep a few calls' worth until the trim (and page faults in fresh arenas
// went down: the same run took less CPU). Mapping every large buffer on its own (M_MMAP_THRESHOLD)
// gave as much back but cost a third more CPU a call in page faults.
void BoundRetainedMemory();

// Hands memory freed by calls back to the operating system (glibc keeps freed pages mapped
// otherwise, so RSS after a burst stays at its peak). ByteBudget does it once calls stop
// (byte_budget.h).
void ReturnFreedMemory();

// What the HTTP server asks of glibc at start-up (GLIBC_TUNABLES). Allocations of up to about a
// kilobyte, most of a call's, come from each thread's own cache without an arena lock, but glibc
// keeps only 7 chunks of a size there: with the arenas bounded, sixteen HTTP workers then queued
// on arena locks and a small call cost 11 % more CPU than with an arena per thread (bench P6).
// 64 chunks a size remove that cost and keep M2–M4's bounds.
inline constexpr char kServerMallocTunables[] = "glibc.malloc.tcache_count=64";

// GLIBC_TUNABLES for the server: `current` (nullptr when unset) with kServerMallocTunables
// appended; "" when nothing is to change — `current` sets a tcache_count already (the operator's
// choice stands, and a re-executed process finds its own).
std::string ServerMallocTunables(const char* current);

// Replaces the process image with itself (same pid, arguments and descriptors), GLIBC_TUNABLES
// extended by ServerMallocTunables — which glibc reads only when a process starts. Returns,
// having changed nothing, when there is nothing to change or the exec fails (the server then runs
// with glibc's defaults). Call first, before any thread exists.
void ReexecWithServerMallocTunables(char** argv);

}  // namespace imgmcp
