#include "server/http/gallery_route.h"

#include <httplib.h>

#include <string>

#include "common/base64.h"
#include "common/sha256.h"

namespace imgmcp::http {
namespace {

// The raw bytes of a lowercase hex string.
std::string FromHex(std::string_view hex) {
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string bytes;
  bytes.reserve(hex.size() / 2);
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes += static_cast<char>((nibble(hex[i]) << 4) | nibble(hex[i + 1]));
  }
  return bytes;
}

// The CSP source of each inline <script> of `page`: 'sha256-<base64 of its text's digest>'.
std::string ScriptHashes(std::string_view page) {
  constexpr std::string_view kOpen = "<script>";
  constexpr std::string_view kClose = "</script>";
  std::string sources;
  size_t pos = 0;
  while ((pos = page.find(kOpen, pos)) != std::string_view::npos) {
    const size_t start = pos + kOpen.size();
    const size_t end = page.find(kClose, start);
    if (end == std::string_view::npos) break;
    sources +=
        " 'sha256-" + Base64Encode(FromHex(Sha256Hex(page.substr(start, end - start)))) + "'";
    pos = end + kClose.size();
  }
  return sources;
}

// The page's code runs only if it is exactly the page's own inline script (by hash: an injected
// script or event handler does not); its styles are inline; images are data: URLs from
// resources/read; the only connection is to this server's /mcp. No framing, no forms, no base
// changes.
std::string ContentSecurityPolicy(std::string_view page) {
  const std::string scripts = ScriptHashes(page);
  return "default-src 'none'; script-src" + (scripts.empty() ? std::string(" 'none'") : scripts) +
         "; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; base-uri 'none'; "
         "form-action 'none'; frame-ancestors 'none'";
}

}  // namespace

void InstallGalleryRoute(httplib::Server& http, std::string_view page) {
  if (page.empty()) return;
  http.Get(kGalleryPath, [page, csp = ContentSecurityPolicy(page)](const httplib::Request&,
                                                                   httplib::Response& res) {
    res.set_header("Content-Security-Policy", csp);
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Referrer-Policy", "no-referrer");
    res.set_header("Cache-Control", "no-cache");
    res.set_content(page.data(), page.size(), "text/html; charset=utf-8");
  });
}

}  // namespace imgmcp::http
