#include "common/host_port.h"

#include <cstdint>

#include "common/decimal.h"

namespace imgmcp {

Result<HostPort> SplitHostPort(std::string_view text) {
  HostPort out;
  std::string_view host = text;
  std::string_view port;
  bool has_port = false;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    const std::string_view rest = close == std::string_view::npos ? "" : text.substr(close + 1);
    if (close == std::string_view::npos || (!rest.empty() && rest.front() != ':')) {
      return InvalidArgument("an IPv6 host needs the form [ADDR]:PORT");
    }
    host = text.substr(1, close - 1);
    out.bracketed = true;
    has_port = !rest.empty();
    if (has_port) port = rest.substr(1);
  } else if (const size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    if (text.find(':') != colon) return InvalidArgument("put IPv6 hosts in brackets");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    has_port = true;
  }
  if (has_port && !port.empty()) {
    const std::optional<uint16_t> number = ParseDecimal<uint16_t>(port);
    if (!number) return InvalidArgument("the port must be a number from 0 to 65535");
    out.port = *number;
  }
  out.host = std::string(host);
  return out;
}

}  // namespace imgmcp
