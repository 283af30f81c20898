#include "server/tools/store_gallery_links.h"

#include <utility>

#include "common/json.h"
#include "common/log.h"
#include "common/random.h"
#include "session/data_dir.h"
#include "session/principal_scope.h"

namespace imgmcp::tools {
namespace {

// What a token's seal is for: a seal made for anything else does not open as a link.
constexpr std::string_view kPurpose = "imgmcp gallery link v1";

Error NotALink(std::string why) {
  return Error(ErrorCode::kPermissionDenied, "the gallery link " + std::move(why));
}

}  // namespace

StoreGalleryLinks::StoreGalleryLinks(session::SessionStore& store, std::chrono::seconds ttl,
                                     const Clock& clock)
    : store_(store), ttl_(ttl), clock_(clock) {}

void StoreGalleryLinks::ServeAt(std::string page_url) {
  MutexLock lock(mu_);
  page_url_ = std::move(page_url);
}

Result<const TextSeal*> StoreGalleryLinks::Seal() {
  MutexLock lock(mu_);
  if (seal_ == nullptr) {
    ASSIGN_OR_RETURN(const std::string key, store_.SharedKey(kKeyName, RandomHex(32)));
    seal_ = std::make_unique<TextSeal>(key, &clock_);
  }
  return seal_.get();
}

std::optional<std::string> StoreGalleryLinks::LinkFor(const mcp::Caller& caller,
                                                      const std::string& session_id) {
  std::string page;
  {
    MutexLock lock(mu_);
    page = page_url_;
  }
  if (page.empty()) return std::nullopt;
  std::string link = page + "#/sessions/" + session_id;
  if (caller.principal.empty()) return link;
  Result<const TextSeal*> seal = Seal();
  if (!seal.ok()) {
    log::Warn("gallery", "no gallery link: the shared key cannot be read: " + seal.error().message);
    return std::nullopt;
  }
  const Json grant = {{"p", caller.principal}, {"s", session_id}};
  return link + "?link=" + std::string(mcp::kGalleryLinkTokenPrefix) +
         (*seal)->Seal(kPurpose, grant.dump(), ttl_);
}

Result<mcp::GalleryGrant> StoreGalleryLinks::Open(std::string_view token) {
  if (!token.starts_with(mcp::kGalleryLinkTokenPrefix)) return NotALink("is not one");
  Result<const TextSeal*> seal = Seal();
  if (!seal.ok()) {
    return Error(ErrorCode::kUnavailable,
                 "the gallery link cannot be checked now: " + seal.error().message);
  }
  Result<std::string> text =
      (*seal)->Open(kPurpose, token.substr(mcp::kGalleryLinkTokenPrefix.size()));
  if (!text.ok()) {
    if (text.error().code == ErrorCode::kDeadlineExceeded) {
      return Error(ErrorCode::kDeadlineExceeded,
                   "the gallery link has expired; get_image returns a new one");
    }
    return NotALink("was not made by this server, or was altered");
  }
  const Json grant = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!grant.is_object() || !grant.value("p", Json()).is_string() ||
      !grant.value("s", Json()).is_string()) {
    return NotALink("is not one this server makes");
  }
  mcp::GalleryGrant opened{grant["p"].get<std::string>(), grant["s"].get<std::string>()};
  if (opened.principal.empty() || !session::IsValidPrincipal(opened.principal) ||
      !session::IsValidSessionId(opened.session_id)) {
    return NotALink("is not one this server makes");
  }
  return opened;
}

}  // namespace imgmcp::tools
