// A budget of bytes for work in flight: a call that will hold decoded images, request bodies and
// answers takes a lease for them first and gives the bytes back when the lease ends. It bounds
// memory where a cap on the number of calls cannot: three calls with fourteen 12 MB references
// each weigh more than thirty-two small ones, and one 4K generation more than both. A lease that
// does not fit is refused at once, never waited for: a call may hold its session's turn or a
// place in it, so waiting here could wait for itself.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>
#include <thread>

#include "common/result.h"
#include "common/thread_annotations.h"

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

  // What the budget does when a large lease has ended and it has been quiet since.
  struct Trim {
    std::function<void()> run;  // ReturnFreedMemory by default
    std::chrono::milliseconds quiet{1000};
  };

  // limit 0 = unlimited (every lease is granted). `flag` names the setting in errors.
  ByteBudget(size_t limit, std::string flag);
  ByteBudget(size_t limit, std::string flag, Trim trim);
  ~ByteBudget();  // stops the trimming thread, if it started
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
  // The trimming thread: once a lease of kTrimAfterBytes or more has ended, it waits until no
  // lease has been taken, grown or ended for trim_.quiet, then runs trim_.run.
  void TrimWhenQuiet(std::stop_token stop);

  const size_t limit_;
  const std::string flag_;
  const Trim trim_;
  mutable Mutex mu_;                     // guards in_use_, changes_, trim_due_, trimmer_
  std::condition_variable_any changed_;  // notified when a trim becomes due
  size_t in_use_ GUARDED_BY(mu_) = 0;
  uint64_t changes_ GUARDED_BY(mu_) = 0;   // leases taken, grown or ended so far
  bool trim_due_ GUARDED_BY(mu_) = false;  // a large lease ended since the last trim
  std::jthread trimmer_ GUARDED_BY(mu_);  // started when the first trim is due; last: stopped first
};

// A budget trims (ReturnFreedMemory, allocator.h) once a lease of kTrimAfterBytes or more has
// ended and no lease has come or gone for a second: a trim costs the next call page faults (right
// after each 4.3 MB import it cost 40 % more CPU a call here), which a server under load would pay
// again and again, and one at rest not at all.
inline constexpr size_t kTrimAfterBytes = 16u << 20;

}  // namespace imgmcp
