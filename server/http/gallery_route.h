// GET /gallery: the session viewer (server/ui) in standalone mode (README.md, "See the chain: the
// session viewer"). The page is static — it carries no session data and no secret — and talks to
// /mcp itself with the same bearer token as any client (it asks the person for it and keeps it out
// of URLs), or, opened through a gallery link (mcp/gallery_links.h), with the link's token from
// the URL's fragment, which browsers never send to a server. Requests to /gallery pass the same
// Host/Origin allow-list as /mcp (McpRoutes::AllowRequest, before routing).
#pragma once

#include <string_view>

namespace httplib {
class Server;
}  // namespace httplib

namespace imgmcp::http {

inline constexpr char kGalleryPath[] = "/gallery";

// Serves `page` (HTML; must outlive the server) at GET kGalleryPath with a Content Security
// Policy that allows only the page's own inline scripts (by their SHA-256, computed here once),
// inline styles, data: images and fetches to its own origin.
// Does nothing when `page` is empty.
void InstallGalleryRoute(httplib::Server& http, std::string_view page);

}  // namespace imgmcp::http
