// Standard base64 (RFC 4648 §4) with padding. Decoding is strict about the alphabet but accepts
// missing padding and the URL-safe alphabet, as Gemini's parsers do.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace imgmcp {

std::string Base64Encode(std::string_view bytes);
// Appends the encoding of `bytes` to `out` (avoids a copy for multi-megabyte images). Reserves
// the room it needs; into storage already reserved, each character is written exactly once.
void Base64EncodeAppend(std::string_view bytes, std::string& out);
size_t Base64EncodedSize(size_t raw_size);
Result<std::string> Base64Decode(std::string_view text);
// base64url (RFC 4648 §5) without padding, as JOSE writes it (JWT headers, claims, signatures).
std::string Base64UrlEncode(std::string_view bytes);

}  // namespace imgmcp
