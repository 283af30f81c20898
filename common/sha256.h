// SHA-256 (OpenSSL) as lowercase hex, for version integrity and golden-image tests, and
// HMAC-SHA-256 for values the server hands out and must recognise unaltered.
#pragma once

#include <string>
#include <string_view>

namespace imgmcp {

std::string Sha256Hex(std::string_view bytes);

// HMAC-SHA-256 of `message` under `key`, as 64 lowercase hex characters.
std::string HmacSha256Hex(std::string_view key, std::string_view message);

}  // namespace imgmcp
