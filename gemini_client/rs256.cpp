// SignRs256 (http_call.h): RS256 signing with OpenSSL, for service-account JWTs. It lives in the
// network module with the rest of the OpenSSL users, so a process that never talks to Google
// never maps libcrypto.
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <memory>
#include <string>

#include "gemini_client/http_call.h"

namespace imgmcp::gemini {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

}  // namespace

Result<std::string> SignRs256(const std::string& private_key_pem, const std::string& data) {
  std::unique_ptr<BIO, BioFree> bio(
      BIO_new_mem_buf(private_key_pem.data(), static_cast<int>(private_key_pem.size())));
  if (bio == nullptr) return MakeError(ErrorCode::kInternal, "out of memory reading the key");
  std::unique_ptr<EVP_PKEY, KeyFree> key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (key == nullptr) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "its private_key is not a PEM private key OpenSSL can read");
  }
  if (EVP_PKEY_base_id(key.get()) != EVP_PKEY_RSA) {
    return MakeError(ErrorCode::kInvalidArgument, "its private_key is not an RSA key");
  }
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  size_t length = 0;
  if (ctx == nullptr ||
      EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &length,
                     reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1) {
    return MakeError(ErrorCode::kInternal, "OpenSSL could not sign with its private_key");
  }
  std::string signature(length, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &length,
                     reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1) {
    return MakeError(ErrorCode::kInternal, "OpenSSL could not sign with its private_key");
  }
  signature.resize(length);
  return signature;
}

}  // namespace imgmcp::gemini
