#include "server/tools/session_resources.h"

#include "common/base64.h"
#include "imaging/codec.h"
#include "mcp/json_rpc.h"
#include "server/tools/caller_store.h"
#include "server/tools/tool_results.h"
#include "server/tools/uris.h"

namespace imgmcp::tools {
namespace {

// What a gallery card shows of a session, so it need not read the whole manifest (every version's
// prompt): the number of versions, and the current one's time, operation and prompt (a bounded
// prefix).
Json Summary(const session::SessionSummary& s) {
  Json summary = {{"versions", s.version_count}, {"updated_at", s.updated_at}};
  if (s.current) {
    summary["created_at"] = s.current->created_at;
    summary["operation"] = s.current->operation;
    summary["prompt"] = mcp::Quoted(s.current->prompt);
  }
  return summary;
}

}  // namespace

Result<mcp::ResourcePage> SessionResources::List(const mcp::Caller& caller,
                                                 const std::optional<std::string>& cursor) {
  CallerStore scoped(store_, caller);
  ASSIGN_OR_RETURN(session::SessionPage page, scoped.get().ListSessions(cursor, page_size_));
  mcp::ResourcePage out;
  for (const auto& s : page.sessions) {
    if (s.current) {
      out.resources.push_back({{"uri", VersionUri(s.session_id, s.current->version)},
                               {"name", s.session_id + " v" + std::to_string(s.current->version)},
                               {"mimeType", s.current->mime_type},
                               {"size", s.current->bytes}});
    }
    out.resources.push_back({{"uri", ManifestUri(s.session_id)},
                             {"name", s.session_id},
                             {"title", "Session " + s.session_id + " (manifest)"},
                             {"mimeType", "application/json"},
                             {"_meta", {{"imgmcp/summary", Summary(s)}}}});
  }
  out.next_cursor = page.next_cursor;
  return out;
}

Json SessionResources::Templates() {
  return Json::array(
      {{{"uriTemplate", "imgmcp://sessions/{session_id}/versions/{version}"},
        {"name", "session-version"},
        {"title", "A version of an editing session"},
        {"description", "The full-resolution image of one version of a session."}},
       {{"uriTemplate", "imgmcp://sessions/{session_id}/versions/{version}/preview"},
        {"name", "session-version-preview"},
        {"title", "A preview of a version"},
        {"description", "One version of a session scaled down (long edge at most " +
                            std::to_string(kPreviewEdge) + " px), for thumbnails."}},
       {{"uriTemplate", "imgmcp://sessions/{session_id}"},
        {"name", "session-manifest"},
        {"title", "An editing session"},
        {"description", "JSON manifest: current version and the history of versions."},
        {"mimeType", "application/json"}}});
}

bool SessionResources::Handles(const std::string& uri) const {
  return ParseSessionUri(uri).has_value();
}

bool SessionResources::Reaches(const mcp::Caller& caller, const std::string& uri) const {
  if (caller.only_session.empty()) return true;
  const std::optional<ParsedUri> parsed = ParseSessionUri(uri);
  return parsed && parsed->session_id == caller.only_session;
}

Result<Json> SessionResources::ReadManifest(session::SessionStore& store, const std::string& uri,
                                            const std::string& session_id) {
  // One snapshot: the versions and the current one are the same moment of the session.
  ASSIGN_OR_RETURN(session::SessionSnapshot snapshot,
                   store.ReadSession(session_id, std::nullopt, /*include_history=*/true));
  Json versions = Json::array();
  for (const auto& v : snapshot.history) {
    Json entry = HistoryEntryJson(v);
    entry["uri"] = VersionUri(session_id, v.version);
    entry["preview_uri"] = PreviewUri(session_id, v.version);
    entry["sha256"] = v.sha256;
    entry["width"] = v.width;
    entry["height"] = v.height;
    entry["backend"] = v.backend;
    entry["model"] = v.model;
    if (v.parent) entry["parent_version"] = *v.parent;
    versions.push_back(std::move(entry));
  }
  Json manifest = {{"session_id", session_id}, {"versions", versions}};
  if (snapshot.version.has_value()) {
    manifest["current"] = VersionStructuredContent(*snapshot.version);
    manifest["current_version"] = snapshot.version->version;
  } else {
    manifest["current_version"] = 0;
  }
  return Json{
      {"contents",
       Json::array({{{"uri", uri}, {"mimeType", "application/json"}, {"text", manifest.dump()}}})}};
}

Result<Json> SessionResources::Read(const mcp::Caller& caller, const std::string& uri) {
  // Only the caller's own sessions: another person's is not found, as one that never existed.
  CallerStore scoped(store_, caller);
  session::SessionStore& store = scoped.get();
  auto parsed = ParseSessionUri(uri);
  if (!parsed || !store.SessionExists(parsed->session_id)) {
    return mcp::ResourceNotFoundError(uri);
  }
  if (!parsed->version) return ReadManifest(store, uri, parsed->session_id);
  auto version = store.GetVersion(parsed->session_id, parsed->version);
  if (!version.ok()) return mcp::ResourceNotFoundError(uri);
  ASSIGN_OR_RETURN(std::string bytes, store.ReadImage(*version));
  std::string mime_type = version->mime_type;
  if (parsed->preview) {
    ASSIGN_OR_RETURN(imaging::EncodedImage preview,
                     imaging::MakePreview(bytes, {kPreviewEdge, kPreviewBytes}));
    bytes = std::move(preview.bytes);
    mime_type = preview.mime_type;
  }
  std::string blob;
  Base64EncodeAppend(bytes, blob);
  return Json{{"contents",
               Json::array({{{"uri", uri}, {"mimeType", mime_type}, {"blob", std::move(blob)}}})}};
}

}  // namespace imgmcp::tools
