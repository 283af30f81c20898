#include "session/postgres/pg_schema.h"

#include "common/log.h"

namespace imgmcp::session::postgres {
namespace {

constexpr const char* kMigrations[] = {
    // v1
    R"sql(
CREATE TABLE imgmcp.meta (
  store_id text NOT NULL
);
INSERT INTO imgmcp.meta(store_id) VALUES (replace(gen_random_uuid()::text, '-', ''));
CREATE TABLE imgmcp.sessions (
  session_id   text PRIMARY KEY,
  last_version bigint NOT NULL DEFAULT 0,
  created_ms   bigint NOT NULL,
  updated_ms   bigint NOT NULL,
  expired      boolean NOT NULL DEFAULT false
);
CREATE INDEX sessions_by_activity ON imgmcp.sessions (updated_ms DESC, session_id DESC);
CREATE TABLE imgmcp.blobs (
  sha256 text PRIMARY KEY,
  size   bigint NOT NULL,
  bytes  bytea NOT NULL
);
ALTER TABLE imgmcp.blobs ALTER COLUMN bytes SET STORAGE EXTERNAL;
CREATE TABLE imgmcp.versions (
  session_id     text NOT NULL REFERENCES imgmcp.sessions ON DELETE CASCADE,
  version        bigint NOT NULL,
  parent         bigint,
  operation      text NOT NULL,
  prompt         text NOT NULL,
  mime_type      text NOT NULL,
  bytes          bigint NOT NULL,
  sha256         text NOT NULL REFERENCES imgmcp.blobs,
  file_extension text NOT NULL,
  width          integer NOT NULL,
  height         integer NOT NULL,
  backend        text NOT NULL,
  model          text NOT NULL,
  created_at     text NOT NULL,
  details        text NOT NULL DEFAULT '{}',
  PRIMARY KEY (session_id, version)
);
CREATE INDEX versions_by_sha256 ON imgmcp.versions (sha256);
CREATE UNLOGGED TABLE imgmcp.turn_lines (
  session_id  text PRIMARY KEY,
  next_ticket bigint NOT NULL
);
CREATE UNLOGGED TABLE imgmcp.turn_tickets (
  session_id text NOT NULL,
  ticket     bigint NOT NULL,
  replica_id bigint NOT NULL,
  PRIMARY KEY (session_id, ticket)
);
CREATE INDEX turn_tickets_by_replica ON imgmcp.turn_tickets (replica_id);
CREATE SEQUENCE imgmcp.replica_ids MINVALUE 1 MAXVALUE 2147483647 CYCLE;
)sql",
    // v2
    R"sql(
CREATE TABLE imgmcp.idempotency_keys (
  session_id      text NOT NULL REFERENCES imgmcp.sessions ON DELETE CASCADE,
  idempotency_key text NOT NULL,
  digest          text NOT NULL,
  version         bigint,
  next_version    bigint,
  created_ms      bigint NOT NULL,
  PRIMARY KEY (session_id, idempotency_key),
  FOREIGN KEY (session_id, version) REFERENCES imgmcp.versions ON DELETE CASCADE
);
CREATE INDEX idempotency_keys_by_version ON imgmcp.idempotency_keys (session_id, version);
)sql",
    // v3
    R"sql(
CREATE TABLE imgmcp.tasks (
  task_id          text PRIMARY KEY,
  owner            text NOT NULL,
  session_id       text NOT NULL,
  tool             text NOT NULL,
  request_json     text NOT NULL,
  status           text NOT NULL,
  status_message   text NOT NULL,
  result_json      text NOT NULL DEFAULT '',
  version          bigint,
  error_json       text NOT NULL DEFAULT '',
  ttl_ms           bigint NOT NULL,
  poll_interval_ms bigint NOT NULL,
  created_ms       bigint NOT NULL,
  updated_ms       bigint NOT NULL,
  runner           text NOT NULL
);
CREATE INDEX tasks_by_owner ON imgmcp.tasks (owner, created_ms DESC, task_id DESC);
CREATE INDEX tasks_by_status ON imgmcp.tasks (status, updated_ms);
)sql",
    // v4
    R"sql(
CREATE TABLE imgmcp.spend (
  id                  bigserial PRIMARY KEY,
  day                 text NOT NULL,
  session_id          text NOT NULL,
  principal           text NOT NULL DEFAULT '',
  model               text NOT NULL,
  usd                 double precision NOT NULL,
  state               text NOT NULL,
  expires_ms          bigint NOT NULL,
  created_ms          bigint NOT NULL,
  input_tokens        bigint NOT NULL DEFAULT 0,
  output_image_tokens bigint NOT NULL DEFAULT 0,
  output_text_tokens  bigint NOT NULL DEFAULT 0,
  thoughts_tokens     bigint NOT NULL DEFAULT 0,
  grounding_queries   bigint NOT NULL DEFAULT 0
);
CREATE INDEX spend_by_day ON imgmcp.spend (day);
CREATE INDEX spend_by_session ON imgmcp.spend (session_id);
)sql",
    // v5
    R"sql(
ALTER TABLE imgmcp.sessions ADD COLUMN principal text NOT NULL DEFAULT '';
CREATE INDEX sessions_by_principal ON imgmcp.sessions (principal, updated_ms DESC, session_id DESC);
CREATE TABLE imgmcp.call_counts (
  principal text NOT NULL,
  window_ms bigint NOT NULL,
  calls     bigint NOT NULL,
  PRIMARY KEY (principal, window_ms)
);
CREATE INDEX call_counts_by_window ON imgmcp.call_counts (window_ms);
CREATE TABLE imgmcp.audit (
  id              bigserial PRIMARY KEY,
  time_ms         bigint NOT NULL,
  principal       text NOT NULL,
  issuer          text NOT NULL,
  subject         text NOT NULL,
  client_id       text NOT NULL,
  action          text NOT NULL,
  session_id      text NOT NULL,
  version         bigint,
  idempotency_key text NOT NULL,
  task_id         text NOT NULL,
  cost_usd        double precision NOT NULL,
  trace_id        text NOT NULL,
  outcome         text NOT NULL
);
CREATE INDEX audit_by_time ON imgmcp.audit (time_ms);
)sql",
    // v6
    R"sql(
CREATE TABLE imgmcp.shared_keys (
  name  text PRIMARY KEY,
  value text NOT NULL
);
)sql",
    // v7
    R"sql(
ALTER TABLE imgmcp.tasks ADD COLUMN batch_model text NOT NULL DEFAULT '';
ALTER TABLE imgmcp.tasks ADD COLUMN batch_group text NOT NULL DEFAULT '';
ALTER TABLE imgmcp.tasks ADD COLUMN batch_job text NOT NULL DEFAULT '';
CREATE INDEX tasks_by_batch ON imgmcp.tasks (batch_model, batch_group) WHERE batch_model <> '';
)sql",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kPgSchemaVersion);

Result<int> ReadVersion(PgConnection& conn) {
  ASSIGN_OR_RETURN(PgResult has,
                   conn.Exec("SELECT to_regclass('imgmcp.schema_version') IS NOT NULL", {},
                             "reading the schema version"));
  if (!has.Bool(0, 0)) return 0;
  ASSIGN_OR_RETURN(PgResult v,
                   conn.Exec("SELECT coalesce(max(version), 0) FROM imgmcp.schema_version", {},
                             "reading the schema version"));
  return static_cast<int>(v.Int(0, 0));
}

Status Migrate(PgConnection& conn) {
  ASSIGN_OR_RETURN(int current, ReadVersion(conn));  // again, under the lock
  if (current > kPgSchemaVersion) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "the PostgreSQL database at " + conn.label() + " has imgmcp schema version " +
                         std::to_string(current) + ", newer than this imgmcp supports (" +
                         std::to_string(kPgSchemaVersion) + "); upgrade imgmcp");
  }
  if (current == kPgSchemaVersion) return Status::Ok();
  RETURN_IF_ERROR(conn.Run("BEGIN", "migrating the schema"));
  auto rollback = [&] { (void)conn.Run("ROLLBACK", "rolling back a migration"); };
  if (current == 0) {
    Status st = conn.Run(
        "CREATE SCHEMA IF NOT EXISTS imgmcp; "
        "CREATE TABLE imgmcp.schema_version (version integer PRIMARY KEY, "
        "applied_at timestamptz NOT NULL DEFAULT now())",
        "creating the imgmcp schema");
    if (!st.ok()) {
      rollback();
      return st;
    }
  }
  for (int v = current + 1; v <= kPgSchemaVersion; ++v) {
    Status st = conn.Run(kMigrations[v - 1], "migrating to schema version " + std::to_string(v));
    if (st.ok()) {
      Result<PgResult> recorded =
          conn.Exec("INSERT INTO imgmcp.schema_version(version) VALUES ($1)", {PgParam::Int(v)},
                    "recording a migration");
      if (!recorded.ok()) st = recorded.error();
    }
    if (!st.ok()) {
      rollback();
      return st;
    }
  }
  RETURN_IF_ERROR(conn.Run("COMMIT", "committing the migration"));
  if (current != 0)
    log::Info("postgres", "migrated the database at " + conn.label() + " from schema version " +
                              std::to_string(current) + " to " + std::to_string(kPgSchemaVersion));
  return Status::Ok();
}

}  // namespace

Result<std::string> MigratePgSchema(PgConnection& conn) {
  const std::string lock_args =
      std::to_string(kAdvisoryNamespace) + ", " + std::to_string(kMigrationLockKey);
  if (Status st = conn.Run("SELECT pg_advisory_lock(" + lock_args + ")", "waiting to migrate");
      !st.ok()) {
    return st.error();
  }
  Status migrated = Migrate(conn);
  (void)conn.Run("SELECT pg_advisory_unlock(" + lock_args + ")", "ending the migration");
  if (!migrated.ok()) return migrated.error();
  ASSIGN_OR_RETURN(PgResult id, conn.Exec("SELECT store_id FROM imgmcp.meta LIMIT 1", {},
                                          "reading the store id"));
  if (id.Rows() != 1) {
    return MakeError(ErrorCode::kDataLoss,
                     "the PostgreSQL database at " + conn.label() + " has no imgmcp store id");
  }
  return id.Text(0, 0);
}

}  // namespace imgmcp::session::postgres
