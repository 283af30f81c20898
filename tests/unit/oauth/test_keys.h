// Ed25519 keys for the resource-server tests: a key pair made with OpenSSL, its public JWK, and
// compact JWTs signed with it.
#pragma once

#include <openssl/evp.h>

#include <memory>
#include <string>
#include <string_view>

#include "common/base64.h"
#include "common/json.h"

namespace imgmcp::oauth::testing {

class Ed25519TestKey {
 public:
  explicit Ed25519TestKey(std::string kid)
      : kid_(std::move(kid)), key_(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519")) {}

  const std::string& kid() const { return kid_; }

  Json PublicJwk() const {
    unsigned char raw[32];
    size_t length = sizeof raw;
    EVP_PKEY_get_raw_public_key(key_.get(), raw, &length);
    return Json{{"kty", "OKP"},
                {"crv", "Ed25519"},
                {"kid", kid_},
                {"x", Base64UrlEncode(std::string(reinterpret_cast<char*>(raw), length))}};
  }

  // A compact JWS of `claims` with header {alg: EdDSA, kid, typ} (`header` entries override).
  std::string Sign(const Json& claims, Json header = Json::object()) const {
    Json full = {{"alg", "EdDSA"}, {"kid", kid_}, {"typ", "at+jwt"}};
    full.update(header);
    const std::string input = Base64UrlEncode(full.dump()) + "." + Base64UrlEncode(claims.dump());
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    unsigned char signature[64];
    size_t length = sizeof signature;
    EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key_.get());
    EVP_DigestSign(ctx.get(), signature, &length,
                   reinterpret_cast<const unsigned char*>(input.data()), input.size());
    return input + "." + Base64UrlEncode(std::string(reinterpret_cast<char*>(signature), length));
  }

 private:
  struct Free {
    void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
  };
  std::string kid_;
  std::unique_ptr<EVP_PKEY, Free> key_;
};

}  // namespace imgmcp::oauth::testing
