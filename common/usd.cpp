#include "common/usd.h"

#include <cstdio>

namespace imgmcp {

std::string FormatUsd(double usd) {
  char out[48];
  std::snprintf(out, sizeof out, usd > 0 && usd < 0.0001 ? "$%.6f" : "$%.4f", usd);
  return out;
}

}  // namespace imgmcp
