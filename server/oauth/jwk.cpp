#include "server/oauth/jwk.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "server/oauth/jwt.h"

namespace imgmcp::oauth {

// A public key OpenSSL built from a JWK, with the family that says which algorithm it serves.
// EVP_PKEY objects built by EVP_PKEY_fromdata are not changed by verifying, so sharing one between
// threads is safe.
class VerifyingKey {
 public:
  enum class Family { kRsa, kEcP256, kEd25519 };

  // Takes ownership of `key`.
  VerifyingKey(Family family, EVP_PKEY* key) : family_(family), key_(key) {}
  ~VerifyingKey() { EVP_PKEY_free(key_); }
  VerifyingKey(const VerifyingKey&) = delete;
  VerifyingKey& operator=(const VerifyingKey&) = delete;

  Family family() const { return family_; }
  EVP_PKEY* pkey() const { return key_; }

 private:
  Family family_;
  EVP_PKEY* key_;
};

namespace {

using Family = VerifyingKey::Family;

struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};
struct DigestCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
struct BignumFree {
  void operator()(BIGNUM* b) const { BN_free(b); }
};
struct ParamBuildFree {
  void operator()(OSSL_PARAM_BLD* b) const { OSSL_PARAM_BLD_free(b); }
};
struct ParamFree {
  void operator()(OSSL_PARAM* p) const { OSSL_PARAM_free(p); }
};
struct EcdsaSigFree {
  void operator()(ECDSA_SIG* s) const { ECDSA_SIG_free(s); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using BignumPtr = std::unique_ptr<BIGNUM, BignumFree>;

// Drops the errors OpenSSL queues while a refused key or signature is handled, so they are not
// left on the thread's queue for the next OpenSSL user (a TLS read there would misread them).
class OpenSslErrorScope {
 public:
  OpenSslErrorScope() { ERR_set_mark(); }
  ~OpenSslErrorScope() { ERR_pop_to_mark(); }
  OpenSslErrorScope(const OpenSslErrorScope&) = delete;
  OpenSslErrorScope& operator=(const OpenSslErrorScope&) = delete;
};

constexpr int kMinRsaModulusBits = 2048;
constexpr int kMaxRsaModulusBits = 16384;  // OpenSSL's own limit (OPENSSL_RSA_MAX_MODULUS_BITS)
constexpr int kMaxRsaExponentBits = 64;    // what OpenSSL allows above 3072-bit moduli
constexpr size_t kP256CoordinateBytes = 32;
constexpr size_t kEd25519KeyBytes = 32;
constexpr size_t kEs256SignatureBytes = 64;

// The JWS algorithm each key family serves: accepted algorithms and families pair one to one.
const char* AlgorithmFor(Family family) {
  switch (family) {
    case Family::kRsa:
      return "RS256";
    case Family::kEcP256:
      return "ES256";
    case Family::kEd25519:
      return "EdDSA";
  }
  return "";
}

const char* FamilyName(Family family) {
  switch (family) {
    case Family::kRsa:
      return "an RSA key";
    case Family::kEcP256:
      return "an EC P-256 key";
    case Family::kEd25519:
      return "an Ed25519 key";
  }
  return "";
}

// The string member `name` of a JWK: "" when absent, an error when present and not a string.
Result<std::string> OptionalKeyString(const Json& jwk, const char* name) {
  const auto it = jwk.find(name);
  if (it == jwk.end()) return std::string();
  if (!it->is_string()) return InvalidArgument(std::string("\"") + name + "\" is not a string");
  return it->get<std::string>();
}

// The bytes of the required base64url member `name` of a JWK.
Result<std::string> KeyBytes(const Json& jwk, const char* name) {
  const auto it = jwk.find(name);
  if (it == jwk.end() || !it->is_string()) {
    return InvalidArgument(std::string("\"") + name + "\" is missing or not a string");
  }
  auto bytes = Base64UrlDecode(it->get_ref<const std::string&>());
  if (!bytes.ok()) {
    return InvalidArgument(std::string("\"") + name + "\" is " + bytes.error().message);
  }
  return bytes;
}

BignumPtr BignumFromBytes(const std::string& bytes) {
  return BignumPtr(BN_bin2bn(reinterpret_cast<const unsigned char*>(bytes.data()),
                             static_cast<int>(bytes.size()), nullptr));
}

// The public key of type `type_name` ("RSA", "EC") that OpenSSL builds from `build`'s parameters.
Result<PkeyPtr> KeyFromParams(const char* type_name, OSSL_PARAM_BLD* build) {
  std::unique_ptr<OSSL_PARAM, ParamFree> params(OSSL_PARAM_BLD_to_param(build));
  std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree> ctx(
      EVP_PKEY_CTX_new_from_name(nullptr, type_name, nullptr));
  EVP_PKEY* key = nullptr;
  if (params == nullptr || ctx == nullptr || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_PUBLIC_KEY, params.get()) != 1) {
    return InvalidArgument("OpenSSL refused the key's parameters");
  }
  return PkeyPtr(key);
}

// An RSA public key from "n" and "e" (RFC 7518 §6.3.1), refusing moduli under 2048 bits and
// exponents that are even, 1, or longer than OpenSSL allows.
Result<PkeyPtr> RsaKey(const Json& jwk) {
  ASSIGN_OR_RETURN(const std::string n_bytes, KeyBytes(jwk, "n"));
  ASSIGN_OR_RETURN(const std::string e_bytes, KeyBytes(jwk, "e"));
  const BignumPtr n = BignumFromBytes(n_bytes);
  const BignumPtr e = BignumFromBytes(e_bytes);
  if (n == nullptr || e == nullptr) return InvalidArgument("OpenSSL could not read \"n\" or \"e\"");
  const int n_bits = BN_num_bits(n.get());
  if (n_bits < kMinRsaModulusBits || n_bits > kMaxRsaModulusBits || !BN_is_odd(n.get())) {
    return InvalidArgument("the RSA modulus is under 2048 bits, too long, or even");
  }
  if (!BN_is_odd(e.get()) || BN_is_one(e.get()) || BN_num_bits(e.get()) > kMaxRsaExponentBits) {
    return InvalidArgument("the RSA exponent is even, 1, or longer than 64 bits");
  }
  std::unique_ptr<OSSL_PARAM_BLD, ParamBuildFree> build(OSSL_PARAM_BLD_new());
  if (build == nullptr ||
      OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_N, n.get()) != 1 ||
      OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_E, e.get()) != 1) {
    return MakeError(ErrorCode::kInternal, "out of memory building an RSA key");
  }
  return KeyFromParams("RSA", build.get());
}

// An EC P-256 public key from "x" and "y" (RFC 7518 §6.2.1), each exactly 32 bytes; a point that
// is not on the curve is refused by OpenSSL's public-key check.
Result<PkeyPtr> EcP256Key(const Json& jwk) {
  ASSIGN_OR_RETURN(const std::string crv, OptionalKeyString(jwk, "crv"));
  if (crv != "P-256") return InvalidArgument("the EC curve is not P-256");
  ASSIGN_OR_RETURN(const std::string x, KeyBytes(jwk, "x"));
  ASSIGN_OR_RETURN(const std::string y, KeyBytes(jwk, "y"));
  if (x.size() != kP256CoordinateBytes || y.size() != kP256CoordinateBytes) {
    return InvalidArgument("a P-256 coordinate is not 32 bytes");
  }
  const std::string point = '\x04' + x + y;  // the uncompressed form (SEC 1 §2.3.3)
  std::unique_ptr<OSSL_PARAM_BLD, ParamBuildFree> build(OSSL_PARAM_BLD_new());
  if (build == nullptr ||
      OSSL_PARAM_BLD_push_utf8_string(build.get(), OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) !=
          1 ||
      OSSL_PARAM_BLD_push_octet_string(build.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                       point.size()) != 1) {
    return MakeError(ErrorCode::kInternal, "out of memory building an EC key");
  }
  ASSIGN_OR_RETURN(PkeyPtr key, KeyFromParams("EC", build.get()));
  std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree> check(
      EVP_PKEY_CTX_new_from_pkey(nullptr, key.get(), nullptr));
  if (check == nullptr || EVP_PKEY_public_check(check.get()) != 1) {
    return InvalidArgument("the EC point is not a valid P-256 public key");
  }
  return key;
}

// An Ed25519 public key from "x" (RFC 8037 §2), exactly 32 bytes.
Result<PkeyPtr> Ed25519Key(const Json& jwk) {
  ASSIGN_OR_RETURN(const std::string crv, OptionalKeyString(jwk, "crv"));
  if (crv != "Ed25519") return InvalidArgument("the OKP curve is not Ed25519");
  ASSIGN_OR_RETURN(const std::string x, KeyBytes(jwk, "x"));
  if (x.size() != kEd25519KeyBytes) return InvalidArgument("the Ed25519 key is not 32 bytes");
  PkeyPtr key(EVP_PKEY_new_raw_public_key(
      EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(x.data()), x.size()));
  if (key == nullptr) return InvalidArgument("OpenSSL refused the Ed25519 key");
  return key;
}

// Refuses a key its publisher meant for something other than checking signatures.
Status CheckKeyUse(const Json& jwk) {
  ASSIGN_OR_RETURN(const std::string use, OptionalKeyString(jwk, "use"));
  if (jwk.contains("use") && use != "sig") return InvalidArgument("\"use\" is not \"sig\"");
  const auto ops = jwk.find("key_ops");
  if (ops == jwk.end()) return Status::Ok();
  if (!ops->is_array()) return InvalidArgument("\"key_ops\" is not an array");
  for (const Json& op : *ops) {
    if (op.is_string() && op.get_ref<const std::string&>() == "verify") return Status::Ok();
  }
  return InvalidArgument("\"key_ops\" does not list \"verify\"");
}

// The family of key type `kty`, and its OpenSSL key built from the JWK's members.
Result<std::pair<Family, PkeyPtr>> BuildKey(const std::string& kty, const Json& jwk) {
  if (kty == "RSA") {
    ASSIGN_OR_RETURN(PkeyPtr key, RsaKey(jwk));
    return std::make_pair(Family::kRsa, std::move(key));
  }
  if (kty == "EC") {
    ASSIGN_OR_RETURN(PkeyPtr key, EcP256Key(jwk));
    return std::make_pair(Family::kEcP256, std::move(key));
  }
  if (kty == "OKP") {
    ASSIGN_OR_RETURN(PkeyPtr key, Ed25519Key(jwk));
    return std::make_pair(Family::kEd25519, std::move(key));
  }
  return InvalidArgument("the key type is not RSA, EC or OKP");  // "oct" among them
}

// One member of a JWK Set's "keys", or why it cannot be used.
Result<Jwk> ParseKey(const Json& jwk) {
  if (!jwk.is_object()) return InvalidArgument("the key is not an object");
  Jwk parsed;
  ASSIGN_OR_RETURN(parsed.kty, OptionalKeyString(jwk, "kty"));
  ASSIGN_OR_RETURN(parsed.kid, OptionalKeyString(jwk, "kid"));
  ASSIGN_OR_RETURN(parsed.alg, OptionalKeyString(jwk, "alg"));
  RETURN_IF_ERROR(CheckKeyUse(jwk));
  ASSIGN_OR_RETURN(auto built, BuildKey(parsed.kty, jwk));
  if (!parsed.alg.empty() && parsed.alg != AlgorithmFor(built.first)) {
    return InvalidArgument("the key's \"alg\" is not one this server accepts for its type");
  }
  parsed.key = std::make_shared<const VerifyingKey>(built.first, built.second.release());
  return parsed;
}

// The DER form OpenSSL verifies (RFC 3279 §2.2.3) of a JWS ES256 signature, R || S in 64 bytes.
Result<std::string> Es256SignatureToDer(std::string_view raw) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(raw.data());
  const size_t half = kEs256SignatureBytes / 2;
  std::unique_ptr<ECDSA_SIG, EcdsaSigFree> sig(ECDSA_SIG_new());
  BignumPtr r(BN_bin2bn(bytes, static_cast<int>(half), nullptr));
  BignumPtr s(BN_bin2bn(bytes + half, static_cast<int>(half), nullptr));
  if (sig == nullptr || r == nullptr || s == nullptr ||
      ECDSA_SIG_set0(sig.get(), r.get(), s.get()) != 1) {
    return MakeError(ErrorCode::kInternal, "out of memory converting an ES256 signature");
  }
  (void)r.release();  // now owned by sig
  (void)s.release();
  const int length = i2d_ECDSA_SIG(sig.get(), nullptr);
  if (length <= 0) return MakeError(ErrorCode::kInternal, "could not encode an ES256 signature");
  std::string der(static_cast<size_t>(length), '\0');
  auto* out = reinterpret_cast<unsigned char*>(der.data());
  if (i2d_ECDSA_SIG(sig.get(), &out) != length) {
    return MakeError(ErrorCode::kInternal, "could not encode an ES256 signature");
  }
  return der;
}

// Whether `signature` is `key`'s signature of `data` with digest `md` (null for Ed25519, which
// hashes internally).
bool DigestVerifies(EVP_PKEY* key, const EVP_MD* md, std::string_view data,
                    std::string_view signature) {
  std::unique_ptr<EVP_MD_CTX, DigestCtxFree> ctx(EVP_MD_CTX_new());
  return ctx != nullptr && EVP_DigestVerifyInit(ctx.get(), nullptr, md, nullptr, key) == 1 &&
         EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                          signature.size(), reinterpret_cast<const unsigned char*>(data.data()),
                          data.size()) == 1;
}

// Refuses an algorithm the key was not built or restricted for.
Status CheckKeyFitsAlgorithm(std::string_view alg, const Jwk& key) {
  if (key.key == nullptr) return InvalidArgument("the key holds no public key");
  const Family family = key.key->family();
  if (alg != AlgorithmFor(family)) {
    return InvalidArgument("a " + std::string(alg) + " signature cannot be checked with " +
                           FamilyName(family));
  }
  if (!key.alg.empty() && key.alg != alg) {
    return InvalidArgument("the key's \"alg\" restricts it to another algorithm than " +
                           std::string(alg));
  }
  return Status::Ok();
}

}  // namespace

bool IsAcceptedAlgorithm(std::string_view alg) {
  return alg == "RS256" || alg == "ES256" || alg == "EdDSA";
}

Result<std::vector<Jwk>> ParseJwks(const Json& document) {
  if (!document.is_object()) return InvalidArgument("the JWK Set is not a JSON object");
  const auto keys = document.find("keys");
  if (keys == document.end() || !keys->is_array()) {
    return InvalidArgument("the JWK Set has no \"keys\" array");
  }
  const OpenSslErrorScope errors;
  std::vector<Jwk> usable;
  for (const Json& member : *keys) {
    auto parsed = ParseKey(member);
    if (parsed.ok()) usable.push_back(std::move(*parsed));
  }
  return usable;
}

Status VerifyJwsSignature(std::string_view alg, const Jwk& key, std::string_view signing_input,
                          std::string_view signature) {
  if (!IsAcceptedAlgorithm(alg)) {
    return InvalidArgument("the signature algorithm is not one of RS256, ES256 and EdDSA");
  }
  RETURN_IF_ERROR(CheckKeyFitsAlgorithm(alg, key));
  const OpenSslErrorScope errors;
  std::string der;
  const EVP_MD* md = EVP_sha256();
  if (alg == "ES256") {
    if (signature.size() != kEs256SignatureBytes) {
      return MakeError(ErrorCode::kPermissionDenied,
                       "the ES256 signature is not 64 bytes (R and S, as JWS writes them)");
    }
    ASSIGN_OR_RETURN(der, Es256SignatureToDer(signature));
    signature = der;
  } else if (alg == "EdDSA") {
    md = nullptr;
  }
  if (!DigestVerifies(key.key->pkey(), md, signing_input, signature)) {
    return MakeError(ErrorCode::kPermissionDenied,
                     "the " + std::string(alg) + " signature does not verify with the key");
  }
  return Status::Ok();
}

}  // namespace imgmcp::oauth
