// Identifiers from the kernel's CSPRNG (getrandom), for session ids and HTTP session ids.
#pragma once

#include <cstddef>
#include <string>

namespace imgmcp {

// `n_bytes` random bytes rendered as 2*n_bytes lowercase hex characters.
std::string RandomHex(size_t n_bytes);

}  // namespace imgmcp
