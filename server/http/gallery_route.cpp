#include "server/http/gallery_route.h"

#include <httplib.h>

namespace imgmcp::http {
namespace {

// The page's code and styles are inline; images are data: URLs from resources/read; the only
// connection is to this server's /mcp. No framing, no forms, no base changes.
constexpr char kContentSecurityPolicy[] =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'";

}  // namespace

void InstallGalleryRoute(httplib::Server& http, std::string_view page) {
  if (page.empty()) return;
  http.Get(kGalleryPath, [page](const httplib::Request&, httplib::Response& res) {
    res.set_header("Content-Security-Policy", kContentSecurityPolicy);
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Referrer-Policy", "no-referrer");
    res.set_header("Cache-Control", "no-cache");
    res.set_content(page.data(), page.size(), "text/html; charset=utf-8");
  });
}

}  // namespace imgmcp::http
