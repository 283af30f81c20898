// The tag of the HTTP transport's log lines (common/log.h): one name for every file of the module.
#pragma once

namespace imgmcp::http {

inline constexpr char kLog[] = "http";

}  // namespace imgmcp::http
