// The SQL of the embedded store: reading and writing its rows (tables sessions, versions and
// idempotency_keys, session/sqlite/schema.h) on one SqliteDb. No files, no locks, no caching:
// SqliteSessionStore decides when each runs, inside which transaction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "session/chain_store.h"
#include "session/data_dir.h"
#include "session/sqlite/sqlite_db.h"

namespace imgmcp::session::sqlite::rows {

struct SessionRow {
  int64_t last_version = 0;
  int64_t updated_ms = 0;
  bool expired = false;
};

// A stored file name must be one plain component the store wrote itself.
bool IsPlainFileName(const std::string& name);

// The session's row, or nullopt.
Result<std::optional<SessionRow>> LoadSession(SqliteDb& db, const std::string& session_id);
// The row of a live (existing, not expired) session; UnknownSessionError otherwise.
Result<SessionRow> LoadLiveSession(SqliteDb& db, const std::string& session_id);

// One version (`version`, or the newest when nullopt), its path under `layout`.
Result<std::optional<VersionInfo>> LoadVersion(SqliteDb& db, const DataDirLayout& layout,
                                               const std::string& session_id,
                                               std::optional<int64_t> version);
// SessionStore::ReadSession's answer from one statement, so one snapshot: kNotFound
// (UnknownSessionError) for an unknown or expired session.
Result<SessionSnapshot> LoadSnapshot(SqliteDb& db, const DataDirLayout& layout,
                                     const std::string& session_id, std::optional<int64_t> version,
                                     bool include_history);
// The files that rows of the session name.
Result<std::vector<std::string>> LoadFileNames(SqliteDb& db, const std::string& session_id);

// Inside a write transaction: the session row (created or revived by its first commit, its
// counter moved from plan.last_issued — kInternal when another writer moved it), the version
// rows, each named `files[i]`, and plan.key naming the last of them.
Status InsertCommit(SqliteDb& db, const CommitPlan& plan, const std::vector<std::string>& files);
// Inside a write transaction: deletes the versions beyond the newest `keep`; returns them.
Result<std::vector<RemovedVersion>> PruneVersions(SqliteDb& db, const std::string& session_id,
                                                  int keep);
// Inside a write transaction: deletes every version of the session; returns them.
Result<std::vector<RemovedVersion>> DeleteVersions(SqliteDb& db, const std::string& session_id);
// Inside a write transaction: the session's activity time (a clear) or its expiry.
Status TouchSession(SqliteDb& db, const std::string& session_id, int64_t now_ms);
Status MarkExpired(SqliteDb& db, const std::string& session_id);
// Inside a write transaction: deletes the session's keys that name no version (a clear's); the
// others go with their versions.
Status DeleteClearKeys(SqliteDb& db, const std::string& session_id);
// Inside a write transaction: records a clear's key, when the session has a row.
Status InsertClearKey(SqliteDb& db, const ClearPlan& plan);
// The key's row with its version, or nullopt (none, or its version is gone).
Result<std::optional<AppliedKey>> LoadKey(SqliteDb& db, const DataDirLayout& layout,
                                          const std::string& session_id, const std::string& key);

// Live sessions idle since before `cutoff_ms`.
Result<std::vector<std::string>> IdleSessions(SqliteDb& db, int64_t cutoff_ms);
// `principal`'s live sessions by newest activity first, after `after` when given, with their
// newest version.
Result<std::vector<ListedSession>> ListSessions(SqliteDb& db, const DataDirLayout& layout,
                                                const std::string& principal,
                                                const std::optional<std::string>& after_id,
                                                int64_t after_ms, int limit);
// The version's row exists.
Result<bool> VersionExists(SqliteDb& db, const std::string& session_id, int64_t version);

}  // namespace imgmcp::session::sqlite::rows
