// How a version row is selected and read back, in one place for every statement of
// PostgresSessionStore that returns versions.
#pragma once

#include <optional>
#include <string>

#include "session/postgres/pg_connection.h"
#include "session/session_store.h"

namespace imgmcp::session::postgres {

// The version columns every read selects (the versions table aliased v), in VersionFromRow's order.
inline constexpr const char* kVersionColumns =
    "v.version, v.parent, v.operation, v.prompt, v.mime_type, v.bytes, v.sha256, "
    "v.file_extension, v.width, v.height, v.backend, v.model, v.created_at, v.details";

// A version row (kVersionColumns starting at column `col`), or nullopt when its columns are NULL
// (no version: a LEFT JOIN). `extension` receives the file extension, from which the caller makes
// the version's path.
std::optional<VersionInfo> VersionFromRow(const PgResult& r, int row, int col,
                                          const std::string& session_id, std::string* extension);

}  // namespace imgmcp::session::postgres
