// Clock seam: code that waits or stamps times takes a Clock so tests can control it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace imgmcp {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point SteadyNow() const = 0;
  virtual std::chrono::system_clock::time_point WallNow() const = 0;
};

class SystemClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point SteadyNow() const override {
    return std::chrono::steady_clock::now();
  }
  std::chrono::system_clock::time_point WallNow() const override {
    return std::chrono::system_clock::now();
  }
};

// Milliseconds since the epoch on `clock`'s wall clock: what stored rows are stamped with.
int64_t WallMs(const Clock& clock);

// RFC 3339 UTC with milliseconds, e.g. "2026-11-30T07:55:09.123Z".
std::string FormatRfc3339(std::chrono::system_clock::time_point t);

}  // namespace imgmcp
