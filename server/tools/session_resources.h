// Sessions as MCP resources: imgmcp://sessions/{id} (JSON manifest),
// imgmcp://sessions/{id}/versions/{n} (the full-resolution image blob) and
// imgmcp://sessions/{id}/versions/{n}/preview (a small rendition, for thumbnails).
#pragma once

#include "mcp/resource.h"
#include "session/session_store.h"

namespace imgmcp::tools {

class SessionResources final : public mcp::ResourceProvider {
 public:
  // The preview resource's size: long edge and encoded-size budget.
  static constexpr int kPreviewEdge = 320;
  static constexpr size_t kPreviewBytes = 96 * 1024;

  explicit SessionResources(session::SessionStore& store, int page_size = 50)
      : store_(store), page_size_(page_size) {}

  Result<mcp::ResourcePage> List(const mcp::Caller&,
                                 const std::optional<std::string>& cursor) override;
  Json Templates() override;
  bool Handles(const std::string& uri) const override;
  // A gallery link's bearer reaches its one session's resources alone.
  bool Reaches(const mcp::Caller& caller, const std::string& uri) const override;
  Result<Json> Read(const mcp::Caller&, const std::string& uri) override;

 private:
  Result<Json> ReadManifest(session::SessionStore& store, const std::string& uri,
                            const std::string& session_id);

  session::SessionStore& store_;
  const int page_size_;
};

}  // namespace imgmcp::tools
