// The OAuth tests' clock: tests/unit/manual_clock.h.
#pragma once

#include "tests/unit/manual_clock.h"

namespace imgmcp::oauth::testing {

using FakeClock = test_util::ManualClock;

}  // namespace imgmcp::oauth::testing
