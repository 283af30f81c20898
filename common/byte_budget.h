// A budget of bytes for work in flight: a call that will hold decoded images and request bodies
// takes a lease for them first and gives the bytes back when the lease ends. It bounds memory
// where a cap on the number of calls cannot: three calls with fourteen 12 MB references each
// weigh more than thirty-two small ones. A lease that does not fit is refused at once, never
// waited for: a call may hold its session's turn or a place in it, so waiting here could wait
// for itself.
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
  // alone exceed the limit; kUnavailable (retry later) when they do not fit beside the leases
  // held now. Both messages give the sizes and name the flag.
  Result<Lease> Acquire(size_t bytes, const std::string& what);

  size_t InUse() const;
  size_t limit() const { return limit_; }

 private:
  void Give(size_t bytes);

  const size_t limit_;
  const std::string flag_;
  mutable std::mutex mu_;  // guards in_use_
  size_t in_use_ = 0;
};

// Hands memory freed by a large call back to the operating system (glibc keeps freed pages of
// big allocations mapped otherwise, so RSS after a burst stays at its peak).
void ReturnFreedMemory();

}  // namespace imgmcp
