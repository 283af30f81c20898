#include "common/byte_budget.h"

#include <malloc.h>

#include <utility>

namespace imgmcp {
namespace {

// Leases at least this large hand their memory back to the system when they end.
constexpr size_t kTrimAfterBytes = 16u << 20;

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

ByteBudget::ByteBudget(size_t limit, std::string flag) : limit_(limit), flag_(std::move(flag)) {}

Result<ByteBudget::Lease> ByteBudget::Acquire(size_t bytes, const std::string& what) {
  if (limit_ == 0) return Lease(nullptr, bytes);
  if (bytes > limit_) {
    return Error(ErrorCode::kResourceExhausted,
                 what + " needs about " + Megabytes(bytes) +
                     " of memory while it runs, more than " + flag_ + " allows (" +
                     Megabytes(limit_) + "); send fewer or smaller images, or raise " + flag_);
  }
  std::lock_guard lock(mu_);
  if (in_use_ + bytes > limit_) {
    return Error(ErrorCode::kUnavailable,
                 "busy: calls in flight hold " + Megabytes(in_use_) + " of the " +
                     Megabytes(limit_) + " imgmcp may use for images (" + flag_ + ") and " + what +
                     " needs about " + Megabytes(bytes) + "; retry when one of them has finished");
  }
  in_use_ += bytes;
  return Lease(this, bytes);
}

void ByteBudget::Give(size_t bytes) {
  {
    std::lock_guard lock(mu_);
    in_use_ -= bytes;
  }
  if (bytes >= kTrimAfterBytes) ReturnFreedMemory();
}

size_t ByteBudget::InUse() const {
  std::lock_guard lock(mu_);
  return in_use_;
}

void ReturnFreedMemory() { malloc_trim(0); }

}  // namespace imgmcp
