// PostgresSessionStore's reads: each one statement, so one snapshot, on a pooled connection that
// is replaced once when it turns out to be dead.
#include <sys/stat.h>

#include "session/data_dir.h"
#include "session/file_io.h"
#include "session/postgres/pg_spend.h"
#include "session/postgres/pg_version_row.h"
#include "session/postgres/postgres_session_store.h"
#include "session/spend_rules.h"
#include "session/version_rules.h"

namespace imgmcp::session::postgres {
namespace {
bool IsRetryableLoss(const Error& e) { return e.code == ErrorCode::kUnavailable; }

}  // namespace

std::optional<VersionInfo> VersionFromRow(const PgResult& r, int row, int col,
                                          const std::string& session_id, std::string* extension) {
  if (r.IsNull(row, col)) return std::nullopt;
  VersionInfo v;
  v.session_id = session_id;
  v.version = r.Int(row, col);
  v.parent = r.OptionalInt(row, col + 1);
  v.operation = r.Text(row, col + 2);
  v.prompt = r.Text(row, col + 3);
  v.mime_type = r.Text(row, col + 4);
  v.bytes = r.Int(row, col + 5);
  v.sha256 = r.Text(row, col + 6);
  *extension = r.Text(row, col + 7);
  v.width = static_cast<int>(r.Int(row, col + 8));
  v.height = static_cast<int>(r.Int(row, col + 9));
  v.backend = r.Text(row, col + 10);
  v.model = r.Text(row, col + 11);
  v.created_at = r.Text(row, col + 12);
  v.details = r.Text(row, col + 13);
  return v;
}

template <typename T, typename Fn>
Result<T> PostgresSessionStore::WithReadConnection(Fn&& fn) {
  for (int attempt = 0;; ++attempt) {
    ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire());
    Result<T> out = fn(*conn);
    if (out.ok() || attempt > 0 || !IsRetryableLoss(out.error()) || !conn->Broken()) {
      return out;
    }
    pool_.DropIdle();  // they are as dead as this one
  }
}

Result<ChainStore::TurnStart> PostgresSessionStore::ReadTurnStart(const std::string& session_id) {
  return WithReadConnection<TurnStart>([&](PgConnection& conn) -> Result<TurnStart> {
    ASSIGN_OR_RETURN(
        PgResult r,
        conn.Exec(std::string("SELECT s.last_version, ") + kVersionColumns +
                      " FROM imgmcp.sessions s LEFT JOIN LATERAL (SELECT * FROM imgmcp.versions "
                      "WHERE session_id = s.session_id ORDER BY version DESC LIMIT 1) v ON NOT "
                      "s.expired WHERE s.session_id = $1",
                  {PgParam::Text(session_id)}, "reading the session at the start of its turn"));
    TurnStart out;
    if (r.Rows() == 1) {
      out.last_issued = r.Int(0, 0);
      std::string extension;
      out.current = VersionFromRow(r, 0, 1, session_id, &extension);
      if (out.current) out.current->path = VersionPath(session_id, out.current->version, extension);
    }
    return out;
  });
}

Result<SessionSnapshot> PostgresSessionStore::LoadSession(const std::string& session_id,
                                                          std::optional<int64_t> version,
                                                          bool include_history) {
  // One statement, so one snapshot: the session row, its versions and its charges of the same
  // moment.
  const std::string charged = SessionChargedUsdSql("imgmcp.spend", "s.session_id");
  const std::string sql =
      include_history
          ? "SELECT s.last_version, s.expired, " + charged + ", " + kVersionColumns +
                " FROM imgmcp.sessions s LEFT JOIN imgmcp.versions v ON v.session_id = "
                "s.session_id WHERE s.session_id = $1 ORDER BY v.version"
          : "SELECT s.last_version, s.expired, " + charged + ", " + kVersionColumns +
                " FROM imgmcp.sessions s LEFT JOIN LATERAL (SELECT * FROM imgmcp.versions "
                "WHERE session_id = s.session_id AND ($2::bigint IS NULL OR version = $2) "
                "ORDER BY version DESC LIMIT 1) v ON true WHERE s.session_id = $1";
  std::vector<PgParam> params = {PgParam::Text(session_id)};
  if (!include_history) params.push_back(PgParam::OptionalInt(version));
  return WithReadConnection<SessionSnapshot>([&](PgConnection& conn) -> Result<SessionSnapshot> {
    ASSIGN_OR_RETURN(PgResult r, conn.Exec(sql, params, "reading a session"));
    if (r.Rows() == 0 || r.Bool(0, 1)) return UnknownSessionError(session_id);
    SessionSnapshot out;
    out.last_issued_version = r.Int(0, 0);
    ASSIGN_OR_RETURN(out.cost_usd, ReadUsd(r, 0, 2));
    for (int i = 0; i < r.Rows(); ++i) {
      std::string extension;
      std::optional<VersionInfo> v = VersionFromRow(r, i, 3, session_id, &extension);
      if (!v) continue;
      v->path = VersionPath(session_id, v->version, extension);
      if (!include_history) {
        out.version = std::move(v);
      } else {
        if (version.has_value() ? v->version == *version : i + 1 == r.Rows()) out.version = v;
        out.history.push_back(std::move(*v));
      }
    }
    return out;
  });
}

// The local copy: written from the stored bytes when it is missing or incomplete.
Status PostgresSessionStore::Materialize(const VersionInfo& version) {
  struct stat st {};
  if (::stat(version.path.c_str(), &st) == 0 && st.st_size == version.bytes) return Status::Ok();
  ASSIGN_OR_RETURN(std::string bytes, ReadImage(version));
  const std::filesystem::path dir = version.path.parent_path();
  RETURN_IF_ERROR(EnsureDir(dir));
  return WriteFileAtomically(dir, version.path.filename().string(), bytes,
                             DataDirLayout::kTempPrefix, Sync::kNone);
}

Result<ChainStore::StoredBytes> PostgresSessionStore::LoadBytes(const VersionInfo& version) {
  const std::string& id = version.session_id;
  return WithReadConnection<StoredBytes>([&](PgConnection& conn) -> Result<StoredBytes> {
    ASSIGN_OR_RETURN(
        PgResult r,
        conn.Exec("SELECT v.sha256, b.bytes FROM imgmcp.versions v JOIN imgmcp.blobs b ON "
                  "b.sha256 = v.sha256 WHERE v.session_id = $1 AND v.version = $2",
                  {PgParam::Text(id), PgParam::Int(version.version)}, "reading an image",
                  /*binary_result=*/true));
    if (r.Rows() == 0) {
      return MakeError(ErrorCode::kNotFound,
                       "session " + id + " has no version " + std::to_string(version.version));
    }
    return StoredBytes{r.Text(0, 1), r.Text(0, 0), "PostgreSQL at " + pool_.label()};
  });
}

Result<bool> PostgresSessionStore::VersionExists(const std::string& session_id, int64_t version) {
  return WithReadConnection<bool>([&](PgConnection& conn) -> Result<bool> {
    ASSIGN_OR_RETURN(
        PgResult r,
        conn.Exec("SELECT 1 FROM imgmcp.versions WHERE session_id = $1 AND version = $2",
                  {PgParam::Text(session_id), PgParam::Int(version)}, "looking up a version"));
    return r.Rows() == 1;
  });
}

Result<std::vector<ListedSession>> PostgresSessionStore::ListSessionRows(
    const std::string& principal, const std::optional<ListAfter>& after, int limit) {
  const std::string sql =
      std::string(
          "SELECT s.session_id, s.updated_ms, (SELECT count(*) FROM imgmcp.versions c "
          "WHERE c.session_id = s.session_id), ") +
      kVersionColumns +
      " FROM imgmcp.sessions s LEFT JOIN LATERAL (SELECT * FROM imgmcp.versions WHERE "
      "session_id = s.session_id ORDER BY version DESC LIMIT 1) v ON true WHERE NOT s.expired AND "
      "s.principal = $2 " +
      (after.has_value() ? "AND (s.updated_ms < $3 OR (s.updated_ms = $3 AND s.session_id < $4)) "
                         : "") +
      "ORDER BY s.updated_ms DESC, s.session_id DESC LIMIT $1";
  std::vector<PgParam> params = {PgParam::Int(limit), PgParam::Text(principal)};
  if (after.has_value()) {
    params.push_back(PgParam::Int(after->updated_ms));
    params.push_back(PgParam::Text(after->session_id));
  }
  return WithReadConnection<std::vector<ListedSession>>(
      [&](PgConnection& conn) -> Result<std::vector<ListedSession>> {
        ASSIGN_OR_RETURN(PgResult r, conn.Exec(sql, params, "listing sessions"));
        std::vector<ListedSession> out;
        for (int i = 0; i < r.Rows(); ++i) {
          ListedSession s{r.Text(i, 0), r.Int(i, 1), std::nullopt, r.Int(i, 2)};
          std::string extension;
          s.current = VersionFromRow(r, i, 3, s.session_id, &extension);
          if (s.current) {
            s.current->path = VersionPath(s.session_id, s.current->version, extension);
          }
          out.push_back(std::move(s));
        }
        return out;
      });
}

Result<std::optional<AppliedKey>> PostgresSessionStore::LoadAppliedKey(
    const std::string& session_id, const std::string& key) {
  return WithReadConnection<std::optional<AppliedKey>>(
      [&](PgConnection& conn) -> Result<std::optional<AppliedKey>> {
        ASSIGN_OR_RETURN(
            PgResult r,
            conn.Exec(
                std::string("SELECT k.digest, k.version, k.next_version, ") + kVersionColumns +
                    " FROM imgmcp.idempotency_keys k LEFT JOIN imgmcp.versions v ON "
                    "v.session_id = k.session_id AND v.version = k.version WHERE "
                    "k.session_id = $1 AND k.idempotency_key = $2",
                {PgParam::Text(session_id), PgParam::Text(key)}, "looking up an idempotency key"));
        if (r.Rows() == 0) return std::optional<AppliedKey>();
        AppliedKey applied;
        applied.digest = r.Text(0, 0);
        if (r.IsNull(0, 1)) {
          applied.cleared_next = r.Int(0, 2);
          return std::optional<AppliedKey>(std::move(applied));
        }
        std::string extension;
        applied.version = VersionFromRow(r, 0, 3, session_id, &extension);
        if (!applied.version) return std::optional<AppliedKey>();  // gone with its version
        applied.version->path = VersionPath(session_id, applied.version->version, extension);
        return std::optional<AppliedKey>(std::move(applied));
      });
}

Result<bool> PostgresSessionStore::SessionIsLive(const std::string& session_id) {
  return WithReadConnection<bool>([&](PgConnection& conn) -> Result<bool> {
    ASSIGN_OR_RETURN(
        PgResult r, conn.Exec("SELECT 1 FROM imgmcp.sessions WHERE session_id = $1 AND NOT expired",
                              {PgParam::Text(session_id)}, "looking up a session"));
    return r.Rows() == 1;
  });
}

}  // namespace imgmcp::session::postgres
