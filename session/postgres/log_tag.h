// The tag of the PostgreSQL store's log lines (common/log.h): one name for every file of the
// module.
#pragma once

namespace imgmcp::session::postgres {

inline constexpr char kLog[] = "postgres";

}  // namespace imgmcp::session::postgres
