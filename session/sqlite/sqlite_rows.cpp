#include "session/sqlite/sqlite_rows.h"

#include <memory>
#include <utility>

#include "session/principal_scope.h"
#include "session/spend_rules.h"
#include "session/version_rules.h"

namespace imgmcp::session::sqlite::rows {
namespace {

constexpr const char* kVersionColumns =
    "session_id, version, parent, operation, prompt, mime_type, bytes, sha256, file, width, "
    "height, backend, model, created_at, details";

// The version whose kVersionColumns start at column `first` of `row`.
Result<VersionInfo> VersionFromRow(Statement& row, int first, const DataDirLayout& layout,
                                   const std::string& id) {
  VersionInfo v;
  v.session_id = row.ColumnText(first);
  v.version = row.ColumnInt(first + 1);
  if (!row.ColumnIsNull(first + 2)) v.parent = row.ColumnInt(first + 2);
  v.operation = row.ColumnText(first + 3);
  v.prompt = row.ColumnText(first + 4);
  v.mime_type = row.ColumnText(first + 5);
  v.bytes = row.ColumnInt(first + 6);
  v.sha256 = row.ColumnText(first + 7);
  const std::string file = row.ColumnText(first + 8);
  if (!IsPlainFileName(file)) {
    return MakeError(ErrorCode::kDataLoss, "database row for session " + id + " version " +
                                               std::to_string(v.version) +
                                               " names an invalid file \"" + file + "\"");
  }
  v.path = layout.SessionImageDir(id) / file;
  v.width = static_cast<int>(row.ColumnInt(first + 9));
  v.height = static_cast<int>(row.ColumnInt(first + 10));
  v.backend = row.ColumnText(first + 11);
  v.model = row.ColumnText(first + 12);
  v.created_at = row.ColumnText(first + 13);
  v.details = row.ColumnText(first + 14);
  return v;
}

// The rows `where_and_order` selects (?1 is the session id, ?2 the version when given).
Result<std::vector<VersionInfo>> LoadVersions(SqliteDb& db, const DataDirLayout& layout,
                                              const std::string& where_and_order,
                                              const std::string& id,
                                              std::optional<int64_t> version) {
  ASSIGN_OR_RETURN(Statement st, db.Prepare(std::string("SELECT ") + kVersionColumns +
                                            " FROM versions WHERE " + where_and_order));
  st.Bind(1, id);
  if (version.has_value()) st.Bind(2, *version);
  std::vector<VersionInfo> out;
  RETURN_IF_ERROR(st.ForEachRow([&](Statement& row) -> Status {
    ASSIGN_OR_RETURN(VersionInfo v, VersionFromRow(row, 0, layout, id));
    out.push_back(std::move(v));
    return Status::Ok();
  }));
  return out;
}

// kVersionColumns of the versions table joined as "v".
const std::string& JoinedVersionColumns() {
  static const std::string columns = [] {
    std::string out = "v.";
    for (const char* c = kVersionColumns; *c != '\0'; ++c) {
      out += *c;
      if (*c == ' ') out += "v.";
    }
    return out;
  }();
  return columns;
}

Result<std::vector<RemovedVersion>> SelectRemoved(SqliteDb& db, const char* sql,
                                                  const std::string& session_id,
                                                  std::optional<int64_t> offset) {
  ASSIGN_OR_RETURN(Statement st, db.Prepare(sql));
  st.Bind(1, session_id);
  if (offset.has_value()) st.Bind(2, *offset);
  std::vector<RemovedVersion> out;
  RETURN_IF_ERROR(st.ForEachRow([&](Statement& row) {
    out.push_back(RemovedVersion{row.ColumnInt(0), row.ColumnText(1), row.ColumnText(2)});
  }));
  return out;
}

Status RunWithSession(SqliteDb& db, const char* sql, const std::string& session_id,
                      std::optional<int64_t> value) {
  ASSIGN_OR_RETURN(Statement st, db.Prepare(sql));
  st.Bind(1, session_id);
  if (value.has_value()) st.Bind(2, *value);
  return st.Run();
}

// Runs a key's INSERT; a key the session already has is kInvalidArgument.
Status KeyInsert(Statement& insert, const std::string& key, const std::string& session_id) {
  Status st = insert.Run();
  if (!st.ok() && st.error().message.find("UNIQUE") != std::string::npos) {
    return MakeError(ErrorCode::kInvalidArgument, "idempotency_key '" + key +
                                                      "' is already recorded in session '" +
                                                      session_id + "'; nothing was committed");
  }
  return st;
}

}  // namespace

bool IsPlainFileName(const std::string& name) {
  return !name.empty() && name[0] != '.' && name.find('/') == std::string::npos;
}

Result<std::optional<SessionRow>> LoadSession(SqliteDb& db, const std::string& session_id) {
  ASSIGN_OR_RETURN(
      Statement st,
      db.Prepare("SELECT last_version, updated_ms, expired FROM sessions WHERE session_id=?"));
  st.Bind(1, session_id);
  ASSIGN_OR_RETURN(bool found, st.Step());
  if (!found) return std::optional<SessionRow>();
  return std::optional<SessionRow>(
      SessionRow{st.ColumnInt(0), st.ColumnInt(1), st.ColumnInt(2) != 0});
}

Result<SessionRow> LoadLiveSession(SqliteDb& db, const std::string& session_id) {
  ASSIGN_OR_RETURN(std::optional<SessionRow> row, LoadSession(db, session_id));
  if (!row.has_value() || row->expired) return UnknownSessionError(session_id);
  return *row;
}

Result<std::optional<VersionInfo>> LoadVersion(SqliteDb& db, const DataDirLayout& layout,
                                               const std::string& session_id,
                                               std::optional<int64_t> version) {
  ASSIGN_OR_RETURN(
      std::vector<VersionInfo> rows,
      version.has_value()
          ? LoadVersions(db, layout, "session_id=?1 AND version=?2", session_id, version)
          : LoadVersions(db, layout, "session_id=?1 ORDER BY version DESC LIMIT 1", session_id,
                         std::nullopt));
  if (rows.empty()) return std::optional<VersionInfo>();
  return std::optional<VersionInfo>(std::move(rows.front()));
}

Result<SessionSnapshot> LoadSnapshot(SqliteDb& db, const DataDirLayout& layout,
                                     const std::string& session_id, std::optional<int64_t> version,
                                     bool include_history) {
  // One statement, so one snapshot (its own read transaction): the session row, its charges
  // and its versions of the same moment.
  const std::string versions =
      include_history ? "v.session_id = s.session_id"
                      : "v.session_id = s.session_id AND v.version = coalesce(?2, (SELECT "
                        "max(version) FROM versions WHERE session_id = ?1))";
  ASSIGN_OR_RETURN(
      Statement st,
      db.Prepare("SELECT s.last_version, s.expired, " + SessionChargedUsdSql("spend", "?1") + ", " +
                 JoinedVersionColumns() + " FROM sessions s LEFT JOIN versions v ON " + versions +
                 " WHERE s.session_id = ?1 ORDER BY v.version"));
  st.Bind(1, session_id);
  if (!include_history && version.has_value()) st.Bind(2, *version);
  SessionSnapshot out;
  bool live = false;
  RETURN_IF_ERROR(st.ForEachRow([&](Statement& row) -> Status {
    live = row.ColumnInt(1) == 0;
    out.last_issued_version = row.ColumnInt(0);
    out.cost_usd = row.ColumnDouble(2);
    if (!live || row.ColumnIsNull(3)) return Status::Ok();  // expired, or no versions
    ASSIGN_OR_RETURN(VersionInfo v, VersionFromRow(row, 3, layout, session_id));
    if (!include_history) {
      out.version = std::move(v);
      return Status::Ok();
    }
    out.history.push_back(std::move(v));
    return Status::Ok();
  }));
  if (!live) return UnknownSessionError(session_id);
  if (include_history && !out.history.empty()) {
    if (!version.has_value()) {
      out.version = out.history.back();
    } else {
      for (const VersionInfo& v : out.history) {
        if (v.version == *version) out.version = v;
      }
    }
  }
  return out;
}

Result<std::vector<std::string>> LoadFileNames(SqliteDb& db, const std::string& session_id) {
  ASSIGN_OR_RETURN(Statement st, db.Prepare("SELECT file FROM versions WHERE session_id=?"));
  st.Bind(1, session_id);
  std::vector<std::string> files;
  RETURN_IF_ERROR(st.ForEachRow([&](Statement& row) { files.push_back(row.ColumnText(0)); }));
  return files;
}

Status InsertCommit(SqliteDb& db, const CommitPlan& plan, const std::vector<std::string>& files) {
  ASSIGN_OR_RETURN(std::optional<SessionRow> row, LoadSession(db, plan.session_id));
  if ((row.has_value() ? row->last_version : 0) != plan.last_issued) {
    return MakeError(ErrorCode::kInternal,
                     "session " + plan.session_id +
                         " changed outside its turn; is this data dir shared with a process "
                         "that does not take the session lock?");
  }
  // The session row first (created, or revived after expiry, by its first commit): the version
  // rows refer to it.
  ASSIGN_OR_RETURN(
      Statement upd,
      db.Prepare(
          "INSERT INTO sessions(session_id, last_version, created_ms, updated_ms, principal) "
          "VALUES(?1,?2,?3,?3,?4) "
          "ON CONFLICT(session_id) DO UPDATE SET last_version=?2, updated_ms=?3, expired=0"));
  upd.Bind(1, plan.session_id)
      .Bind(2, plan.versions.back().number)
      .Bind(3, plan.now_ms)
      .Bind(4, std::string(SplitScopedSessionId(plan.session_id).principal));
  RETURN_IF_ERROR(upd.Run());
  for (size_t i = 0; i < plan.versions.size(); ++i) {
    const CommitPlan::Planned& v = plan.versions[i];
    const NewVersion& nv = *v.source;
    ASSIGN_OR_RETURN(
        Statement ins,
        db.Prepare("INSERT INTO versions(session_id, version, parent, operation, prompt, "
                   "mime_type, bytes, sha256, file, created_at, width, height, backend, model, "
                   "details) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)"));
    ins.Bind(1, plan.session_id)
        .Bind(2, v.number)
        .Bind(3, nv.parent)
        .Bind(4, nv.operation)
        .Bind(5, nv.prompt)
        .Bind(6, nv.mime_type)
        .Bind(7, static_cast<int64_t>(nv.bytes.size()))
        .Bind(8, v.sha256)
        .Bind(9, files[i])
        .Bind(10, plan.created_at)
        .Bind(11, static_cast<int64_t>(nv.width))
        .Bind(12, static_cast<int64_t>(nv.height))
        .Bind(13, nv.backend)
        .Bind(14, nv.model)
        .Bind(15, nv.details);
    RETURN_IF_ERROR(ins.Run());
  }
  if (!plan.key.has_value()) return Status::Ok();
  ASSIGN_OR_RETURN(Statement key,
                   db.Prepare("INSERT INTO idempotency_keys(session_id, idempotency_key, digest, "
                              "version, created_ms) VALUES(?1,?2,?3,?4,?5)"));
  key.Bind(1, plan.session_id)
      .Bind(2, plan.key->key)
      .Bind(3, plan.key->digest)
      .Bind(4, plan.versions.back().number)
      .Bind(5, plan.now_ms);
  return KeyInsert(key, plan.key->key, plan.session_id);
}

Result<std::vector<RemovedVersion>> PruneVersions(SqliteDb& db, const std::string& session_id,
                                                  int keep) {
  ASSIGN_OR_RETURN(std::vector<RemovedVersion> pruned,
                   SelectRemoved(db,
                                 "SELECT version, sha256, file FROM versions WHERE session_id=? "
                                 "ORDER BY version DESC LIMIT -1 OFFSET ?",
                                 session_id, keep));
  if (pruned.empty()) return pruned;
  RETURN_IF_ERROR(RunWithSession(db, "DELETE FROM versions WHERE session_id=? AND version<=?",
                                 session_id, pruned.front().version));  // the newest pruned
  return pruned;
}

Result<std::vector<RemovedVersion>> DeleteVersions(SqliteDb& db, const std::string& session_id) {
  ASSIGN_OR_RETURN(
      std::vector<RemovedVersion> removed,
      SelectRemoved(db, "SELECT version, sha256, file FROM versions WHERE session_id=?", session_id,
                    std::nullopt));
  RETURN_IF_ERROR(
      RunWithSession(db, "DELETE FROM versions WHERE session_id=?", session_id, std::nullopt));
  return removed;
}

Status TouchSession(SqliteDb& db, const std::string& session_id, int64_t now_ms) {
  return RunWithSession(db, "UPDATE sessions SET updated_ms=?2 WHERE session_id=?1", session_id,
                        now_ms);
}

Status MarkExpired(SqliteDb& db, const std::string& session_id) {
  return RunWithSession(db, "UPDATE sessions SET expired=1 WHERE session_id=?", session_id,
                        std::nullopt);
}

Status DeleteClearKeys(SqliteDb& db, const std::string& session_id) {
  return RunWithSession(db, "DELETE FROM idempotency_keys WHERE session_id=? AND version IS NULL",
                        session_id, std::nullopt);
}

Status InsertClearKey(SqliteDb& db, const ClearPlan& plan) {
  if (!plan.key.has_value()) return Status::Ok();
  ASSIGN_OR_RETURN(
      Statement key,
      db.Prepare("INSERT INTO idempotency_keys(session_id, idempotency_key, digest, next_version, "
                 "created_ms) SELECT ?1,?2,?3,?4,?5 FROM sessions WHERE session_id=?1"));
  key.Bind(1, plan.session_id)
      .Bind(2, plan.key->key)
      .Bind(3, plan.key->digest)
      .Bind(4, plan.last_issued + 1)
      .Bind(5, plan.now_ms);
  return KeyInsert(key, plan.key->key, plan.session_id);
}

Result<std::optional<AppliedKey>> LoadKey(SqliteDb& db, const DataDirLayout& layout,
                                          const std::string& session_id, const std::string& key) {
  ASSIGN_OR_RETURN(std::unique_ptr<ReadTransaction> tx, ReadTransaction::Begin(db));
  ASSIGN_OR_RETURN(Statement st, db.Prepare("SELECT digest, version, next_version FROM "
                                            "idempotency_keys WHERE session_id=? AND "
                                            "idempotency_key=?"));
  st.Bind(1, session_id).Bind(2, key);
  ASSIGN_OR_RETURN(bool found, st.Step());
  if (!found) return std::optional<AppliedKey>();
  AppliedKey applied;
  applied.digest = st.ColumnText(0);
  if (st.ColumnIsNull(1)) {
    applied.cleared_next = st.ColumnInt(2);
    return std::optional<AppliedKey>(std::move(applied));
  }
  ASSIGN_OR_RETURN(applied.version, LoadVersion(db, layout, session_id, st.ColumnInt(1)));
  if (!applied.version.has_value()) return std::optional<AppliedKey>();  // gone with its version
  return std::optional<AppliedKey>(std::move(applied));
}

Result<std::vector<std::string>> IdleSessions(SqliteDb& db, int64_t cutoff_ms) {
  ASSIGN_OR_RETURN(
      Statement st,
      db.Prepare("SELECT session_id FROM sessions WHERE expired=0 AND updated_ms < ?"));
  st.Bind(1, cutoff_ms);
  std::vector<std::string> idle;
  RETURN_IF_ERROR(st.ForEachRow([&](Statement& row) { idle.push_back(row.ColumnText(0)); }));
  return idle;
}

Result<std::vector<ListedSession>> ListSessions(SqliteDb& db, const DataDirLayout& layout,
                                                const std::string& principal,
                                                const std::optional<std::string>& after_id,
                                                int64_t after_ms, int limit) {
  // Each session with the number of versions it holds (counted on the versions key).
  const std::string sql =
      std::string(
          "SELECT session_id, updated_ms, (SELECT COUNT(*) FROM versions v WHERE "
          "v.session_id = sessions.session_id) FROM sessions WHERE expired=0 AND principal=?4 ") +
      (after_id.has_value() ? "AND (updated_ms < ?1 OR (updated_ms = ?1 AND session_id < ?2)) "
                            : "") +
      "ORDER BY updated_ms DESC, session_id DESC LIMIT ?3";
  ASSIGN_OR_RETURN(Statement st, db.Prepare(sql));
  if (after_id.has_value()) st.Bind(1, after_ms).Bind(2, *after_id);
  st.Bind(3, static_cast<int64_t>(limit)).Bind(4, principal);
  std::vector<ListedSession> out;
  RETURN_IF_ERROR(st.ForEachRow([&](Statement& row) {
    out.push_back(
        ListedSession{row.ColumnText(0), row.ColumnInt(1), std::nullopt, row.ColumnInt(2)});
  }));
  for (ListedSession& s : out) {
    if (!IsValidStoredSessionId(s.session_id)) continue;
    ASSIGN_OR_RETURN(s.current, LoadVersion(db, layout, s.session_id, std::nullopt));
  }
  return out;
}

Result<bool> VersionExists(SqliteDb& db, const std::string& session_id, int64_t version) {
  ASSIGN_OR_RETURN(Statement st,
                   db.Prepare("SELECT 1 FROM versions WHERE session_id=? AND version=?"));
  st.Bind(1, session_id).Bind(2, version);
  return st.Step();
}

}  // namespace imgmcp::session::sqlite::rows
