#include "session/sqlite/schema.h"

#include <string>

#include "common/log.h"

namespace imgmcp::session::sqlite {
namespace {

constexpr const char* kMigrations[] = {
    // v1
    R"sql(
CREATE TABLE sessions (
  session_id   TEXT PRIMARY KEY NOT NULL,
  last_version INTEGER NOT NULL DEFAULT 0,
  created_ms   INTEGER NOT NULL,
  updated_ms   INTEGER NOT NULL
);
CREATE TABLE versions (
  session_id TEXT NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
  version    INTEGER NOT NULL,
  parent     INTEGER,
  operation  TEXT NOT NULL,
  prompt     TEXT NOT NULL,
  mime_type  TEXT NOT NULL,
  bytes      INTEGER NOT NULL,
  sha256     TEXT NOT NULL,
  file       TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (session_id, version)
);
)sql",
    // v2
    R"sql(
ALTER TABLE versions ADD COLUMN width INTEGER NOT NULL DEFAULT 0;
ALTER TABLE versions ADD COLUMN height INTEGER NOT NULL DEFAULT 0;
ALTER TABLE versions ADD COLUMN backend TEXT NOT NULL DEFAULT '';
ALTER TABLE versions ADD COLUMN model TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN expired INTEGER NOT NULL DEFAULT 0;
CREATE INDEX sessions_by_activity ON sessions(updated_ms DESC, session_id DESC);
)sql",
    // v3
    R"sql(
ALTER TABLE versions ADD COLUMN details TEXT NOT NULL DEFAULT '{}';
)sql",
    // v4
    R"sql(
CREATE TABLE idempotency_keys (
  session_id      TEXT NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
  idempotency_key TEXT NOT NULL,
  digest          TEXT NOT NULL,
  version         INTEGER,
  next_version    INTEGER,
  created_ms      INTEGER NOT NULL,
  PRIMARY KEY (session_id, idempotency_key),
  FOREIGN KEY (session_id, version) REFERENCES versions(session_id, version) ON DELETE CASCADE
);
CREATE INDEX idempotency_keys_by_version ON idempotency_keys(session_id, version);
)sql",
    // v5
    R"sql(
CREATE TABLE tasks (
  task_id          TEXT PRIMARY KEY NOT NULL,
  owner            TEXT NOT NULL,
  session_id       TEXT NOT NULL,
  tool             TEXT NOT NULL,
  request_json     TEXT NOT NULL,
  status           TEXT NOT NULL,
  status_message   TEXT NOT NULL,
  result_json      TEXT NOT NULL DEFAULT '',
  version          INTEGER,
  error_json       TEXT NOT NULL DEFAULT '',
  ttl_ms           INTEGER NOT NULL,
  poll_interval_ms INTEGER NOT NULL,
  created_ms       INTEGER NOT NULL,
  updated_ms       INTEGER NOT NULL,
  runner           TEXT NOT NULL
);
CREATE INDEX tasks_by_owner ON tasks(owner, created_ms DESC, task_id DESC);
CREATE INDEX tasks_by_status ON tasks(status, updated_ms);
)sql",
    // v6
    R"sql(
CREATE TABLE spend (
  id                  INTEGER PRIMARY KEY,
  day                 TEXT NOT NULL,
  session_id          TEXT NOT NULL,
  principal           TEXT NOT NULL DEFAULT '',
  model               TEXT NOT NULL,
  usd                 REAL NOT NULL,
  state               TEXT NOT NULL,
  expires_ms          INTEGER NOT NULL,
  created_ms          INTEGER NOT NULL,
  input_tokens        INTEGER NOT NULL DEFAULT 0,
  output_image_tokens INTEGER NOT NULL DEFAULT 0,
  output_text_tokens  INTEGER NOT NULL DEFAULT 0,
  thoughts_tokens     INTEGER NOT NULL DEFAULT 0,
  grounding_queries   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX spend_by_day ON spend(day);
CREATE INDEX spend_by_session ON spend(session_id);
)sql",
    // v7
    R"sql(
ALTER TABLE sessions ADD COLUMN principal TEXT NOT NULL DEFAULT '';
CREATE INDEX sessions_by_principal ON sessions(principal, updated_ms DESC, session_id DESC);
CREATE TABLE call_counts (
  principal TEXT NOT NULL,
  window_ms INTEGER NOT NULL,
  calls     INTEGER NOT NULL,
  PRIMARY KEY (principal, window_ms)
);
CREATE INDEX call_counts_by_window ON call_counts(window_ms);
CREATE TABLE audit (
  id              INTEGER PRIMARY KEY,
  time_ms         INTEGER NOT NULL,
  principal       TEXT NOT NULL,
  issuer          TEXT NOT NULL,
  subject         TEXT NOT NULL,
  client_id       TEXT NOT NULL,
  action          TEXT NOT NULL,
  session_id      TEXT NOT NULL,
  version         INTEGER,
  idempotency_key TEXT NOT NULL,
  task_id         TEXT NOT NULL,
  cost_usd        REAL NOT NULL,
  trace_id        TEXT NOT NULL,
  outcome         TEXT NOT NULL
);
CREATE INDEX audit_by_time ON audit(time_ms);
)sql",
    // v8
    R"sql(
CREATE TABLE shared_keys (
  name  TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
);
)sql",
    // v9
    R"sql(
ALTER TABLE tasks ADD COLUMN batch_model TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN batch_group TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN batch_job TEXT NOT NULL DEFAULT '';
CREATE INDEX tasks_by_batch ON tasks(batch_model, batch_group) WHERE batch_model <> '';
)sql",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kSchemaVersion);

Result<bool> HasTable(SqliteDb& db, const char* name) {
  ASSIGN_OR_RETURN(Statement st,
                   db.Prepare("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?"));
  st.Bind(1, name);
  return st.Step();
}

Result<int64_t> CountUserTables(SqliteDb& db) {
  ASSIGN_OR_RETURN(
      Statement st,
      db.Prepare(
          "SELECT count(*) FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"));
  RETURN_IF_ERROR(st.Step());
  return st.ColumnInt(0);
}

}  // namespace

Result<int> ReadSchemaVersion(SqliteDb& db) {
  ASSIGN_OR_RETURN(bool has, HasTable(db, "schema_version"));
  if (!has) return 0;
  ASSIGN_OR_RETURN(Statement st,
                   db.Prepare("SELECT coalesce(max(version), 0) FROM schema_version"));
  RETURN_IF_ERROR(st.Step());
  return static_cast<int>(st.ColumnInt(0));
}

Status MigrateSchema(SqliteDb& db, int64_t now_ms) {
  // Checked outside the transaction first so the common case (up to date) takes no write lock.
  ASSIGN_OR_RETURN(int before, ReadSchemaVersion(db));
  if (before == kSchemaVersion) return Status::Ok();

  ASSIGN_OR_RETURN(std::unique_ptr<WriteTransaction> tx, WriteTransaction::Begin(db));
  ASSIGN_OR_RETURN(int current, ReadSchemaVersion(db));  // again, under the write lock
  if (current > kSchemaVersion) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "database " + db.path().string() + " has schema version " +
                         std::to_string(current) + ", newer than this imgmcp supports (" +
                         std::to_string(kSchemaVersion) +
                         "); upgrade imgmcp or use another data dir");
  }
  if (current == 0) {
    ASSIGN_OR_RETURN(int64_t tables, CountUserTables(db));
    if (tables != 0) {
      return MakeError(ErrorCode::kFailedPrecondition,
                       "database " + db.path().string() +
                           " has tables but no schema_version table: not an imgmcp database");
    }
    RETURN_IF_ERROR(
        db.Exec("CREATE TABLE schema_version (version INTEGER PRIMARY KEY NOT NULL, "
                "applied_ms INTEGER NOT NULL)"));
  }
  for (int v = current + 1; v <= kSchemaVersion; ++v) {
    Status st = db.Exec(kMigrations[v - 1]);
    if (!st.ok()) {
      return WithContext(
          st.error(), "migrating the database to schema version " + std::to_string(v) + " failed");
    }
    ASSIGN_OR_RETURN(Statement ins,
                     db.Prepare("INSERT INTO schema_version(version, applied_ms) VALUES(?,?)"));
    ins.Bind(1, static_cast<int64_t>(v)).Bind(2, now_ms);
    st = ins.Run();
    if (!st.ok()) return st;
  }
  RETURN_IF_ERROR(tx->Commit());
  if (current != 0) {
    log::Info("session", "migrated " + db.path().string() + " from schema version " +
                             std::to_string(current) + " to " + std::to_string(kSchemaVersion));
  }
  return Status::Ok();
}

}  // namespace imgmcp::session::sqlite
