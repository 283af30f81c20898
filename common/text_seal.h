// TextSeal: text the server hands out and must later recognise unaltered — MRTR requestState
// (mcp/request_state.h) and gallery links (server/tools/store_gallery_links.h). A sealed text is
// bound to a purpose (a seal made for one purpose does not open for another), stamped with an
// expiry and MACed (HMAC-SHA-256) with the server's key, so servers sharing the key open each
// other's seals and nobody else can make one. The text itself is not hidden, only protected.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"

namespace imgmcp {

class TextSeal {
 public:
  // `key`: the MAC key; empty → a random key of this process's own. `clock` (null: the system's)
  // must outlive the seal.
  explicit TextSeal(std::string key, const Clock* clock = nullptr);

  // "<expiry, unix seconds>.<base64 of text>.<hex MAC of purpose \n expiry.base64>": no '.'
  // inside a part, no character a URL fragment or an HTTP header must escape but '+' '/' '='.
  std::string Seal(std::string_view purpose, std::string_view text, std::chrono::seconds ttl) const;
  // The text of a seal made for `purpose` with this key. Errors: kInvalidArgument for what is no
  // seal at all, kPermissionDenied for one altered or made with another key or for another
  // purpose, kDeadlineExceeded for one past its expiry.
  Result<std::string> Open(std::string_view purpose, std::string_view sealed) const;

 private:
  std::string Mac(std::string_view purpose, std::string_view body) const;

  const std::string key_;
  const Clock& clock_;
};

}  // namespace imgmcp
