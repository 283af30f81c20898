// US dollars as imgmcp shows them, in results, refusals and logs: one rule for every amount.
#pragma once

#include <string>

namespace imgmcp {

// "$0.0336": four decimals; six below a hundredth of a cent, so a small charge is not "$0.0000".
std::string FormatUsd(double usd);

}  // namespace imgmcp
