#include "common/random.h"

#include <sys/random.h>

#include <stdexcept>
#include <vector>

namespace imgmcp {

std::string RandomHex(size_t n_bytes) {
  std::vector<unsigned char> buf(n_bytes);
  size_t got = 0;
  while (got < n_bytes) {
    const ssize_t n = ::getrandom(buf.data() + got, n_bytes - got, 0);
    if (n < 0) continue;  // EINTR; getrandom does not otherwise fail for small requests
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(n_bytes * 2);
  for (unsigned char c : buf) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

}  // namespace imgmcp
