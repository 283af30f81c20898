// A clock a unit test moves by hand: its steady and wall times start at construction (the wall
// time at the real now) and advance only with Advance. Not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>

#include "common/clock.h"

namespace imgmcp::test_util {

class ManualClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point SteadyNow() const override {
    return std::chrono::steady_clock::time_point(std::chrono::hours(1)) + offset_;
  }
  std::chrono::system_clock::time_point WallNow() const override { return wall_start_ + offset_; }
  int64_t WallSeconds() const {
    return std::chrono::duration_cast<std::chrono::seconds>(WallNow().time_since_epoch()).count();
  }
  void Advance(std::chrono::milliseconds by) { offset_ += by; }

 private:
  const std::chrono::system_clock::time_point wall_start_ = std::chrono::system_clock::now();
  std::chrono::milliseconds offset_{0};
};

}  // namespace imgmcp::test_util
