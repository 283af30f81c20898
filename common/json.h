// The one JSON type used across imgmcp. Wire-format names live only in (de)serialisation code.
#pragma once

#include <nlohmann/json.hpp>

namespace imgmcp {
using Json = nlohmann::json;
}  // namespace imgmcp
