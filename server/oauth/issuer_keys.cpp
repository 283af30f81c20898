#include "server/oauth/issuer_keys.h"

#include <utility>

#include "common/log.h"

namespace imgmcp::oauth {

namespace {

constexpr char kLog[] = "oauth";

// The key type a signature algorithm needs (jwk.h accepts exactly these algorithms).
std::string_view KeyTypeFor(std::string_view alg) {
  if (alg == "RS256") return "RSA";
  if (alg == "ES256") return "EC";
  if (alg == "EdDSA") return "OKP";
  return "";
}

}  // namespace

IssuerKeys::IssuerKeys(std::string issuer, OAuthUrl issuer_url, const FetchFunction& fetch,
                       const Clock& clock, std::chrono::milliseconds refetch_interval)
    : issuer_(std::move(issuer)),
      issuer_url_(std::move(issuer_url)),
      fetch_(fetch),
      clock_(clock),
      refetch_interval_(refetch_interval) {}

std::optional<Jwk> IssuerKeys::Lookup(std::string_view kid, std::string_view alg) const {
  const std::string_view type = KeyTypeFor(alg);
  const Jwk* only = nullptr;
  size_t fitting = 0;
  for (const Jwk& key : keys_) {
    if (!kid.empty()) {
      if (key.kid == kid) return key;
      continue;
    }
    if (key.kty == type && (key.alg.empty() || key.alg == alg)) {
      only = &key;
      ++fitting;
    }
  }
  if (fitting == 1) return *only;
  return std::nullopt;
}

Result<Jwk> IssuerKeys::Find(std::string_view kid, std::string_view alg) {
  MutexLock lock(mu_);
  if (auto key = Lookup(kid, alg)) return *std::move(key);
  // A fetch already under way may bring the key: wait for it rather than start another.
  const uint64_t seen = fetches_;
  fetch_done_.wait(lock, [this]() {
    mu_.AssertHeld();
    return !fetching_;
  });
  const bool fetched_meanwhile = fetches_ != seen;
  if (!fetched_meanwhile &&
      (!last_fetch_ || clock_.SteadyNow() - *last_fetch_ >= refetch_interval_)) {
    fetching_ = true;
    const bool filling = keys_.empty();
    std::string jwks_uri = jwks_uri_;
    lock.unlock();
    Result<std::vector<Jwk>> fetched = FetchKeys(&jwks_uri);
    lock.lock();
    fetching_ = false;
    ++fetches_;
    last_fetch_ = clock_.SteadyNow();
    jwks_uri_ = std::move(jwks_uri);
    if (fetched.ok()) {
      // The fetch that first filled the set is not counted: the first key id it lacks (a
      // rotation right after start) is fetched at once.
      if (filling) last_fetch_.reset();
      keys_ = std::move(fetched).value();
      last_error_.reset();
    } else {
      last_error_ = fetched.error();
      log::Warn(kLog,
                "could not fetch the signing keys of " + issuer_ + ": " + fetched.error().message);
    }
    fetch_done_.notify_all();
  }
  if (auto key = Lookup(kid, alg)) return *std::move(key);
  if (last_error_ && keys_.empty()) {
    return MakeError(ErrorCode::kUnavailable, "the signing keys of " + issuer_ +
                                                  " could not be fetched: " + last_error_->message);
  }
  return MakeError(ErrorCode::kPermissionDenied,
                   kid.empty() ? "the token names no key id and " + issuer_ +
                                     " has no single key for " + std::string(alg)
                               : "the token's key id is not among the signing keys of " + issuer_);
}

Result<std::vector<Jwk>> IssuerKeys::FetchKeys(std::string* jwks_uri) const {
  if (jwks_uri->empty()) {
    ASSIGN_OR_RETURN(*jwks_uri, DiscoverJwksUri());
  }
  ASSIGN_OR_RETURN(const Json document, FetchJson(*jwks_uri, "the JWK Set"));
  ASSIGN_OR_RETURN(std::vector<Jwk> keys, ParseJwks(document));
  log::Info(kLog,
            "fetched " + std::to_string(keys.size()) + " usable signing key(s) of " + issuer_);
  return keys;
}

// RFC 8414 metadata, else OpenID Connect Discovery; the document must name this issuer exactly
// (RFC 8414 §3.3) and a jwks_uri imgmcp may fetch.
Result<std::string> IssuerKeys::DiscoverJwksUri() const {
  std::string problems;
  for (const std::string& url : IssuerMetadataUrls(issuer_url_)) {
    Result<Json> metadata = FetchJson(url, "the metadata");
    if (!metadata.ok()) {
      problems += (problems.empty() ? "" : "; ") + metadata.error().message;
      continue;
    }
    const auto issuer = metadata->find("issuer");
    if (issuer == metadata->end() || !issuer->is_string() || *issuer != issuer_) {
      return MakeError(ErrorCode::kFailedPrecondition,
                       "the metadata at " + url + " does not name the issuer " + issuer_);
    }
    const auto jwks = metadata->find("jwks_uri");
    if (jwks == metadata->end() || !jwks->is_string()) {
      return MakeError(ErrorCode::kFailedPrecondition,
                       "the metadata at " + url + " names no jwks_uri");
    }
    RETURN_IF_ERROR(ParseOAuthUrl(jwks->get<std::string>(), "its jwks_uri"));
    return jwks->get<std::string>();
  }
  return MakeError(ErrorCode::kUnavailable, "no metadata of " + issuer_ + ": " + problems);
}

Result<Json> IssuerKeys::FetchJson(const std::string& url, std::string_view what) const {
  ASSIGN_OR_RETURN(const FetchedDocument answer, fetch_(url));
  if (answer.status != 200) {
    return MakeError(ErrorCode::kUnavailable, std::string(what) + " at " + url + " answered HTTP " +
                                                  std::to_string(answer.status));
  }
  Json document = Json::parse(answer.body, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object()) {
    return MakeError(ErrorCode::kUnavailable,
                     std::string(what) + " at " + url + " is not a JSON object");
  }
  return document;
}

}  // namespace imgmcp::oauth
