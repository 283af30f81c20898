// Gallery links (docs/design.md, "Gallery links"): the address get_image returns for the /gallery
// page showing one session. Under OAuth the link carries a token — sealed by the server, expiring,
// naming a principal and one of their sessions — that the page sends as its bearer token, so a
// browser opens the session without an access token of its own, read-only and that session alone
// (Caller::only_session). The tools make links; the HTTP transport opens their tokens.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "mcp/caller.h"

namespace imgmcp::mcp {

// Every link token starts with this, so a transport tells one from an OAuth access token.
inline constexpr std::string_view kGalleryLinkTokenPrefix = "imgmcp-gallery.";

// What a link's token grants: one session of one principal.
struct GalleryGrant {
  std::string principal;
  std::string session_id;
};

class GalleryLinks {
 public:
  virtual ~GalleryLinks() = default;
  // The page's address showing `session_id` of `caller`; nullopt when there is no page to link
  // to (no HTTP listener) or no link can be made now (the shared key cannot be read).
  virtual std::optional<std::string> LinkFor(const Caller& caller,
                                             const std::string& session_id) = 0;
  // What a link token grants. Errors: kPermissionDenied (not a token this server made, or
  // altered), kDeadlineExceeded (expired), kUnavailable (the key cannot be read now).
  virtual Result<GalleryGrant> Open(std::string_view token) = 0;
};

}  // namespace imgmcp::mcp
