#include "common/byte_budget.h"

#include <utility>

#include "common/allocator.h"

namespace imgmcp {
namespace {

std::string Megabytes(size_t bytes) {
  return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MB";
}

}  // namespace

ByteBudget::Lease::Lease(Lease&& other) noexcept
    : budget_(std::exchange(other.budget_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

ByteBudget::Lease& ByteBudget::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Release();
    budget_ = std::exchange(other.budget_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

ByteBudget::Lease::~Lease() { Release(); }

void ByteBudget::Lease::Release() {
  if (budget_ != nullptr) budget_->Give(bytes_);
  budget_ = nullptr;
  bytes_ = 0;
}

Status ByteBudget::Lease::Extend(size_t more, const std::string& what) {
  if (budget_ != nullptr) RETURN_IF_ERROR(budget_->Take(bytes_, more, what));
  bytes_ += more;
  return Status::Ok();
}

ByteBudget::ByteBudget(size_t limit, std::string flag)
    : ByteBudget(limit, std::move(flag), Trim{ReturnFreedMemory}) {}

ByteBudget::ByteBudget(size_t limit, std::string flag, Trim trim)
    : limit_(limit), flag_(std::move(flag)), trim_(std::move(trim)) {}

ByteBudget::~ByteBudget() {
  std::jthread trimmer;
  {
    MutexLock lock(mu_);
    trimmer = std::move(trimmer_);
  }
  // Joined outside the lock: the thread takes it to see the stop.
}

Result<ByteBudget::Lease> ByteBudget::Acquire(size_t bytes, const std::string& what) {
  if (limit_ == 0) return Lease(nullptr, bytes);
  RETURN_IF_ERROR(Take(0, bytes, what));
  return Lease(this, bytes);
}

Status ByteBudget::Take(size_t held, size_t more, const std::string& what) {
  if (held + more > limit_) {
    return MakeError(ErrorCode::kResourceExhausted,
                     what + " needs about " + Megabytes(held + more) +
                         " of memory while it runs, more than the whole " + flag_ + " budget (" +
                         Megabytes(limit_) +
                         ") allows, so it cannot run even alone; send fewer or smaller images, "
                         "ask for a smaller image_size, or raise " +
                         flag_);
  }
  MutexLock lock(mu_);
  if (in_use_ + more > limit_) {
    return MakeError(ErrorCode::kUnavailable,
                     "busy: calls in flight hold " + Megabytes(in_use_) + " of the " +
                         Megabytes(limit_) + " imgmcp may use for images (" + flag_ + ") and " +
                         what + " needs about " + Megabytes(more) + (held > 0 ? " more" : "") +
                         "; retry when one of them has finished");
  }
  in_use_ += more;
  ++changes_;
  return Status::Ok();
}

void ByteBudget::Give(size_t bytes) {
  MutexLock lock(mu_);
  in_use_ -= bytes;
  ++changes_;
  if (bytes < kTrimAfterBytes || !trim_.run) return;
  trim_due_ = true;
  if (!trimmer_.joinable()) {
    trimmer_ = std::jthread([this](std::stop_token stop) { TrimWhenQuiet(stop); });
  }
  changed_.notify_all();
}

void ByteBudget::TrimWhenQuiet(std::stop_token stop) {
  MutexLock lock(mu_);
  const auto due = [&] {
    mu_.AssertHeld();
    return trim_due_;
  };
  while (changed_.wait(lock, stop, due)) {
    // Quiet: nothing taken or given for trim_.quiet. Busy: wait again from the last change.
    const uint64_t seen = changes_;
    const auto changed = [&] {
      mu_.AssertHeld();
      return changes_ != seen;
    };
    if (changed_.wait_for(lock, stop, trim_.quiet, changed)) continue;
    if (stop.stop_requested()) return;
    trim_due_ = false;
    lock.unlock();
    trim_.run();
    lock.lock();
  }
}

size_t ByteBudget::InUse() const {
  MutexLock lock(mu_);
  return in_use_;
}

}  // namespace imgmcp
