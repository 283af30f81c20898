// SHA-256 (OpenSSL) as lowercase hex, for version integrity and golden-image tests.
#pragma once

#include <string>
#include <string_view>

namespace imgmcp {

std::string Sha256Hex(std::string_view bytes);

}  // namespace imgmcp
