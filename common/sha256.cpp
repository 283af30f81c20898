#include "common/sha256.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace imgmcp {

namespace {

std::string Hex(const unsigned char* bytes, unsigned int len) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 15]);
  }
  return out;
}

// SHA-256 fetched from OpenSSL's provider once: EVP_sha256() makes every digest look it up again
// (a lock and a search per call), which showed in a call that hashes an access token.
const EVP_MD* Sha256() {
  static EVP_MD* const fetched = EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
  return fetched != nullptr ? fetched : EVP_sha256();
}

}  // namespace

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, Sha256(), nullptr);
  return Hex(digest, len);
}

std::string HmacSha256Hex(std::string_view key, std::string_view message) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest, &len);
  return Hex(digest, len);
}

}  // namespace imgmcp
