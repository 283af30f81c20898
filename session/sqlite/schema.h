// The database schema and its migrations. The table schema_version records every migration that
// has been applied; opening a data dir applies the missing ones in one IMMEDIATE transaction, so
// two processes opening an old data dir at once migrate it exactly once.
//
// History:
//   v1  sessions(session_id, last_version, created_ms, updated_ms),
//       versions(session_id, version, parent, operation, prompt, mime_type, bytes, sha256, file,
//                created_at)
//   v2  versions += width, height, backend, model; sessions += expired; activity index
//   v3  versions += details (opaque JSON text kept by the tools; '{}' for older rows)
//   v4  idempotency_keys(session_id, idempotency_key, digest, version, next_version, created_ms):
//       a commit's key names its version and is deleted with it (ON DELETE CASCADE); a clear's key
//       has no version but next_version, and lasts until the next clear or expiry
//   v5  tasks(task_id, owner, session_id, tool, request_json, status, status_message,
//             result_json, version, error_json, ttl_ms, poll_interval_ms, created_ms, updated_ms,
//             runner): MCP tasks (task_records.h); no foreign key to sessions: a task's row and
//       the versions it made expire each by their own rule, neither ever removes the other
//   v6  spend(id, day, session_id, principal, model, usd, state, expires_ms, created_ms,
//             input_tokens, output_image_tokens, output_text_tokens, thoughts_tokens,
//             grounding_queries): the spend ledger (session/spend_ledger.h), holds and charges;
//       no foreign key: a session's charges outlive its versions (what was paid stays paid)
//   v7  sessions += principal: whose session it is (session/principal_scope.h; '' = the local
//       principal, so every older session stays the local one's); listed by principal.
//       call_counts(principal, window_ms, calls): tool calls per person per minute (the rate
//       limit, SessionStore::CountCall), every process on the data dir counting in one row.
//       audit(id, time_ms, principal, issuer, subject, client_id, action, session_id, version,
//             idempotency_key, task_id, cost_usd, trace_id, outcome): the audit trail
//       (session/audit_log.h)
//   v8  shared_keys(name, value): secrets every process of the data dir shares
//   v9  tasks += batch_model, batch_group, batch_job: a batch task's model, the group (batch job)
//       its poller put it in and that job's name ('' for immediate tasks; session/batch_tasks.h)
#pragma once

#include "common/result.h"
#include "session/sqlite/sqlite_db.h"

namespace imgmcp::session::sqlite {

inline constexpr int kSchemaVersion = 9;

// Brings the database to kSchemaVersion. Errors: kFailedPrecondition for a schema newer than this
// build or a database that is not imgmcp's; kDataLoss for a corrupt file.
Status MigrateSchema(SqliteDb& db, int64_t now_ms);

// The schema version recorded in the database (0 when it has none yet).
Result<int> ReadSchemaVersion(SqliteDb& db);

}  // namespace imgmcp::session::sqlite
