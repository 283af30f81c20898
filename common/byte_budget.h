// A budget of bytes for work in flight: a call that will hold decoded images, request bodies and
// answers takes a lease for them first and gives the bytes back when the lease ends. It bounds
// memory where a cap on the number of calls cannot: three calls with fourteen 12 MB references
// each weigh more than thirty-two small ones, and one 4K generation more than both. A lease that
// does not fit is refused at once, never waited for: a call may hold its session's turn or a
// place in it, so waiting here could wait for itself.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>

#include "common/result.h"

namespace imgmcp {

class ByteBudget {
 public:
  // Bytes held while a lease lives; given back when it ends.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    ~Lease();
    size_t bytes() const { return bytes_; }

    // Adds `more` bytes to this lease, for what the call learns it needs once it has read its
    // inputs or its base. Judged like Acquire with the bytes it holds already: refused as larger
    // than the whole budget when they and `more` together exceed the limit, as busy when `more`
    // does not fit beside the leases held now. A refusal leaves the lease as it was. A lease of
    // an unlimited budget (or none) always grows.
    Status Extend(size_t more, const std::string& what);

   private:
    friend class ByteBudget;
    Lease(ByteBudget* budget, size_t bytes) : budget_(budget), bytes_(bytes) {}
    void Release();
    ByteBudget* budget_ = nullptr;
    size_t bytes_ = 0;
  };

  // limit 0 = unlimited (every lease is granted). `flag` names the setting in errors.
  ByteBudget(size_t limit, std::string flag);
  ByteBudget(const ByteBudget&) = delete;
  ByteBudget& operator=(const ByteBudget&) = delete;

  // A lease of `bytes` for `what` (e.g. "this edit_image call"). kResourceExhausted when `bytes`
  // alone exceed the limit (the message says the call is larger than the whole budget, so no
  // retry helps); kUnavailable (retry later) when they do not fit beside the leases held now.
  // Both messages give the sizes and name the flag.
  Result<Lease> Acquire(size_t bytes, const std::string& what);

  size_t InUse() const;
  size_t limit() const { return limit_; }

 private:
  // `held`: what the caller's lease holds already (0 for a new one); `more`: what it asks for.
  Status Take(size_t held, size_t more, const std::string& what);
  void Give(size_t bytes);

  const size_t limit_;
  const std::string flag_;
  mutable std::mutex mu_;  // guards in_use_
  size_t in_use_ = 0;
};

// Hands memory freed by a large call back to the operating system (glibc keeps freed pages of
// big allocations mapped otherwise, so RSS after a burst stays at its peak). A lease of
// kTrimAfterBytes or more does it when it ends: a trim costs the next call page faults, which
// only a large call pays back (trimming after every 2 MB import cost it 45 % more CPU).
void ReturnFreedMemory();
inline constexpr size_t kTrimAfterBytes = 16u << 20;

// Bounds what the allocator keeps between calls; called once at start-up, before any thread.
// glibc gives threads their own arenas (up to 8 a core), each keeping the high-water mark of the
// calls that ran on it: 60 edits importing 4.3 MB each over HTTP, one at a time, left 589 MB
// resident. Two arenas keep about two calls' worth (and page faults in fresh arenas went down:
// the same run took less CPU). Mapping every large buffer on its own (M_MMAP_THRESHOLD) gave as
// much back but cost a third more CPU a call in page faults and unmappings.
void BoundRetainedMemory();

}  // namespace imgmcp
