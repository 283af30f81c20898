// ImageTools' exactly-once writes (docs/generation.md, "Exactly-once writes"): a call whose
// idempotency_key is already recorded in its session is answered with the recorded call's result,
// rebuilt from what the store kept with the version (or the clear), without calling the backend
// or committing anything.
#include "common/log.h"
#include "server/tools/image_tools.h"
#include "server/tools/version_details.h"
#include "session/idempotency.h"

namespace imgmcp::tools {
Result<std::optional<mcp::ToolResult>> ImageTools::Repeat(
    session::SessionStore& store, const std::string& tool, const std::string& session_id,
    const std::optional<session::IdempotencyRecord>& key, InlineMode mode, bool saving) {
  if (!key) return std::optional<mcp::ToolResult>();
  ASSIGN_OR_RETURN(std::optional<session::AppliedKey> applied,
                   store.FindAppliedKey(session_id, key->key));
  if (!applied) return std::optional<mcp::ToolResult>();
  RETURN_IF_ERROR(session::CheckSameCall(*applied, key->digest, key->key, session_id));
  const std::string said =
      "Repeat of an earlier " + tool + " call with idempotency_key '" + key->key + "': ";
  if (applied->cleared_next) {
    log::Info("tools", tool + ": a repeat in session " + session_id + ", answered from its clear");
    ResultParts parts = EmptySessionParts(session_id, said + "it cleared session '" + session_id +
                                                          "' (the next version was then to be " +
                                                          std::to_string(*applied->cleared_next) +
                                                          "); nothing was done again.");
    parts.structured["cleared"] = true;
    parts.structured["next_version"] = *applied->cleared_next;
    parts.structured["repeated"] = true;
    return std::optional<mcp::ToolResult>(
        BuildToolResult(std::move(parts), options_.preview, options_.limits));
  }
  if (!applied->version) return std::optional<mcp::ToolResult>();  // neither: nothing recorded
  const session::VersionInfo& version = *applied->version;
  const std::string number = std::to_string(version.version);
  log::Info("tools",
            tool + ": a repeat in session " + session_id + ", answered from version " + number);
  Json extra = RecordedAnswerFields(version.details);
  extra["repeated"] = true;
  std::string summary = said + "it made version " + number + " of session '" + session_id + "' (" +
                        DescribeVersion(version) + ") with the " + version.backend + " backend (" +
                        version.model + "), returned again; nothing was done again.";
  if (saving) {
    summary += "\nNo copy was written by this repeat (save_to): call get_image with version " +
               number + " and save_to to write one.";
  }
  return std::optional<mcp::ToolResult>(
      VersionResult(store, summary, version, mode, std::move(extra)));
}

}  // namespace imgmcp::tools
