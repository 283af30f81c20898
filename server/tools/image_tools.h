// The four image tools (DESIGN.md §2): generate_image, edit_image, get_image, reset_session.
// They sit on the SessionStore (ordering, durability) and an ImageBackend (pixels); they know
// nothing about stdio or HTTP.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "imaging/codec.h"
#include "imaging/image_backend.h"
#include "server/mcp/resource.h"
#include "server/mcp/tool.h"
#include "server/tools/image_input.h"
#include "server/tools/tool_results.h"
#include "session/session_store.h"

namespace imgmcp::tools {

struct ImageToolsOptions {
  imaging::PreviewOptions preview;  // inline "preview" budget
  imaging::DecodeLimits limits;
  // Appended to every summary, e.g. why the offline backend is in use. Empty for none.
  std::string backend_note;
  std::chrono::milliseconds heartbeat_interval{1000};  // progress while the backend runs
  std::chrono::seconds backend_deadline{600};          // overall limit of one backend call
  size_t max_prompt_bytes = 100 * 1024;
};

struct RegisteredTool {
  mcp::ToolDefinition definition;
  mcp::ToolHandler handler;
  mcp::ToolAdmission admission;  // reserves the session's turn when the call arrives
};

class ImageTools {
 public:
  // All references must outlive this object. `notifier` may be null.
  ImageTools(session::SessionStore& store, imaging::ImageBackend& backend,
             const ImageInputResolver& inputs, mcp::ResourceNotifier* notifier,
             ImageToolsOptions options);

  std::vector<RegisteredTool> Tools();

  // Draws the call's place in its session's line at arrival (the protocol core calls this on the
  // reading thread, in arrival order), so turns follow arrival order, not thread start order.
  std::unique_ptr<mcp::CallReservation> ReserveSessionTurn(const Json& arguments);

  mcp::ToolResult GenerateImage(const Json& arguments, mcp::ToolCallContext& ctx);
  mcp::ToolResult EditImage(const Json& arguments, mcp::ToolCallContext& ctx);
  mcp::ToolResult GetImage(const Json& arguments, mcp::ToolCallContext& ctx);
  mcp::ToolResult ResetSession(const Json& arguments, mcp::ToolCallContext& ctx);

 private:
  // Runs the backend in a concurrency slot with a progress heartbeat; checks cancellation after.
  template <typename Fn>
  Result<imaging::BackendImage> RunBackend(const std::string& what, mcp::ToolCallContext& ctx,
                                           Fn&& call);
  // The version to commit for what the backend returned; kInternal when it is not an image.
  Result<session::NewVersion> BackendVersion(imaging::BackendImage image,
                                             const std::string& operation,
                                             const std::string& prompt,
                                             std::optional<int64_t> parent);
  // Commits `nv` while the result's image block is built on another thread; releases the turn
  // right after the commit. `prepared` receives the block when the commit succeeded.
  Result<session::VersionInfo> CommitWhilePreparing(std::unique_ptr<session::EditTurn>& turn,
                                                    const session::NewVersion& nv, InlineMode mode,
                                                    std::optional<PreparedImage>* prepared);
  Result<session::VersionInfo> CommitImport(session::EditTurn& turn,
                                            const imaging::EncodedImage& image);
  // `prepared`, when given, is the image block already built from the version's bytes.
  mcp::ToolResult VersionResult(const std::string& summary, const session::VersionInfo& version,
                                InlineMode mode, Json extra_structured = Json::object(),
                                std::optional<PreparedImage> prepared = std::nullopt);
  void AnnounceNewVersion(const session::VersionInfo& version, bool new_session);
  std::string Note() const;

  session::SessionStore& store_;
  imaging::ImageBackend& backend_;
  const ImageInputResolver& inputs_;
  mcp::ResourceNotifier* notifier_;
  ImageToolsOptions options_;
};

// Tool definitions (names, titles, descriptions written for a model, schemas, annotations).
mcp::ToolDefinition GenerateImageDefinition();
mcp::ToolDefinition EditImageDefinition();
mcp::ToolDefinition GetImageDefinition();
mcp::ToolDefinition ResetSessionDefinition();

}  // namespace imgmcp::tools
