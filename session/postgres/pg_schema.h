// The PostgreSQL schema (all of it in the schema "imgmcp") and its migrations. Migrations are
// numbered; imgmcp.schema_version records every one applied. Opening a store applies the missing
// ones in one transaction while holding an advisory lock, so replicas that start together migrate
// the database exactly once (the others wait for the lock, then find it done).
//
// History:
//   v1  meta(store_id)                       a random id naming this database in local caches
//       sessions(session_id, last_version, created_ms, updated_ms, expired)
//       blobs(sha256, size, bytes)           image bytes, content-addressed (one copy per digest)
//       versions(session_id, version, parent, operation, prompt, mime_type, bytes, sha256 → blobs,
//                file_extension, width, height, backend, model, created_at, details)
//       turn_lines(session_id, next_ticket), turn_tickets(session_id, ticket, replica_id)
//                                            UNLOGGED: the turn queue (emptied by a crash restart)
//       sequence replica_ids                 one per connected replica (never reused)
//   v2  idempotency_keys(session_id, idempotency_key, digest, version, next_version, created_ms)
//                                            a commit's key names its version and is deleted with
//                                            it (ON DELETE CASCADE); a clear's key has no version
//                                            but next_version, and lasts until the next clear
//   v3  tasks(task_id, owner, session_id, tool, request_json, status, status_message, result_json,
//             version, error_json, ttl_ms, poll_interval_ms, created_ms, updated_ms, runner)
//                                            MCP tasks (task_records.h); runner "replica:<id>"
//   v4  spend(id, day, session_id, principal, model, usd, state, expires_ms, created_ms,
//             input_tokens, output_image_tokens, output_text_tokens, thoughts_tokens,
//             grounding_queries)
//                                            the spend ledger (spend_ledger.h): a call's hold
//                                            ('held', its estimate) until it is settled
//                                            ('charged', what it cost) or released (deleted)
//   v5  sessions += principal                whose session it is (principal_scope.h; '' = the
//                                            local principal: every older session)
//       call_counts(principal, window_ms, calls)
//                                            tool calls per person per minute, every replica
//                                            counting in one row (SessionStore::CountCall)
//       audit(id, time_ms, principal, issuer, subject, client_id, action, session_id, version,
//             idempotency_key, task_id, cost_usd, trace_id, outcome)
//                                            the audit trail (audit_log.h)
//   v6  shared_keys(name, value)             secrets every replica shares
//   v7  tasks += batch_model, batch_group, batch_job
//                                            a batch task's model, its group (batch job) and
//                                            that job's name ('' for immediate tasks;
//                                            session/batch_tasks.h)
#pragma once

#include <string>

#include "common/result.h"
#include "session/postgres/pg_connection.h"

namespace imgmcp::session::postgres {

inline constexpr int kPgSchemaVersion = 7;

// Advisory lock keys (the two-int form; the first number is imgmcp's namespace).
inline constexpr int kAdvisoryNamespace = 0x696d67;  // "img"
inline constexpr int kMigrationLockKey = 0;          // held while migrating
// A replica's liveness lock is (kAdvisoryNamespace, replica id): replica ids start above this.
inline constexpr int kFirstReplicaId = 1;
// Held (for one statement) by the replica that removes expired task rows: one at a time.
inline constexpr int kTaskSweepLockKey = -1;
// Held (for one transaction) by every spend hold while it checks the budgets and is kept: one hold
// at a time on the whole database (pg_spend.h).
inline constexpr int kSpendLockKey = -2;
// Held (for as long as it polls, on a connection of its own) by the replica that polls the batch
// jobs (session/batch_tasks.h): one at a time.
inline constexpr int kBatchPollLockKey = -3;

// Brings the database to kPgSchemaVersion. kFailedPrecondition for a newer schema than this build
// knows. Returns the database's store id.
Result<std::string> MigratePgSchema(PgConnection& conn);

}  // namespace imgmcp::session::postgres
