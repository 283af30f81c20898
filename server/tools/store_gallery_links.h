// StoreGalleryLinks: gallery links (mcp/gallery_links.h) whose tokens are sealed (common/
// text_seal.h) with a key kept in the session store (SessionStore::SharedKey), so a link one
// replica made opens on every other, and after a restart. The key is read at the first link made
// or opened; a store that cannot give it yet means no link now (and a 503 for one being opened).
// Thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/text_seal.h"
#include "common/thread_annotations.h"
#include "mcp/gallery_links.h"
#include "session/session_store.h"

namespace imgmcp::tools {

class StoreGalleryLinks final : public mcp::GalleryLinks {
 public:
  // The name the key is kept under in the store.
  static constexpr char kKeyName[] = "gallery links v1";

  // `store` and `clock` must outlive this object; a link is good for `ttl`.
  StoreGalleryLinks(session::SessionStore& store, std::chrono::seconds ttl, const Clock& clock);

  // Where the page is (e.g. "https://images.example.com/gallery"), once a listener serves it;
  // until then (and over stdio) LinkFor makes none.
  void ServeAt(std::string page_url);

  // The plain page address for the local principal (the page asks for the server's bearer
  // token, if it has one); for an OAuth principal, one with a token in its fragment.
  std::optional<std::string> LinkFor(const mcp::Caller& caller,
                                     const std::string& session_id) override;
  Result<mcp::GalleryGrant> Open(std::string_view token) override;

 private:
  // The seal, made from the store's shared key at its first use.
  Result<const TextSeal*> Seal();

  session::SessionStore& store_;
  const std::chrono::seconds ttl_;
  const Clock& clock_;
  Mutex mu_;  // guards page_url_ and seal_
  std::string page_url_ GUARDED_BY(mu_);
  std::unique_ptr<TextSeal> seal_ GUARDED_BY(mu_);
};

}  // namespace imgmcp::tools
