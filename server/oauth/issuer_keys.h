// IssuerKeys: one trusted authorization server's signing keys, found through its metadata
// (oauth_urls.h) and its `jwks_uri`, cached, and fetched again when a token names a key the cache
// does not hold — so an issuer can rotate its keys without a restart. One fetch at a time (callers
// that need the keys meanwhile wait for its result) and at most one per
// OAuthOptions::refetch_interval, so tokens naming random key ids cannot make imgmcp fetch per
// request; the fetch that first filled the set does not count (a rotation right after it is
// fetched at once), a failed one does (an issuer that is down is asked once per interval).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "common/thread_annotations.h"
#include "server/oauth/jwk.h"
#include "server/oauth/oauth_options.h"
#include "server/oauth/oauth_urls.h"

namespace imgmcp::oauth {

class IssuerKeys {
 public:
  // `fetch` and `clock` must outlive this.
  IssuerKeys(std::string issuer, OAuthUrl issuer_url, const FetchFunction& fetch,
             const Clock& clock, std::chrono::milliseconds refetch_interval);
  IssuerKeys(const IssuerKeys&) = delete;
  IssuerKeys& operator=(const IssuerKeys&) = delete;

  const std::string& issuer() const { return issuer_; }

  // The key that verifies a token with header `kid` and `alg`: the key with that id, or with no
  // kid, the one key of the set whose type fits `alg`. Fetches the keys when none are cached or
  // the id is unknown (see above). kPermissionDenied when no key fits; kUnavailable when the
  // keys could not be fetched.
  Result<Jwk> Find(std::string_view kid, std::string_view alg) EXCLUDES(mu_);

 private:
  std::optional<Jwk> Lookup(std::string_view kid, std::string_view alg) const REQUIRES(mu_);
  // Fetches the metadata (once) and the key set, outside the lock.
  Result<std::vector<Jwk>> FetchKeys(std::string* jwks_uri) const;
  Result<std::string> DiscoverJwksUri() const;
  Result<Json> FetchJson(const std::string& url, std::string_view what) const;

  const std::string issuer_;
  const OAuthUrl issuer_url_;
  const FetchFunction& fetch_;
  const Clock& clock_;
  const std::chrono::milliseconds refetch_interval_;

  Mutex mu_;                                // guards the cache below and the fetch in progress
  std::condition_variable_any fetch_done_;  // notified when a fetch ends (`fetching_` false)
  std::vector<Jwk> keys_ GUARDED_BY(mu_);
  std::string jwks_uri_ GUARDED_BY(mu_);  // "" until the metadata named it
  bool fetching_ GUARDED_BY(mu_) = false;
  uint64_t fetches_ GUARDED_BY(mu_) = 0;  // fetches ended, successful or not
  // The fetch the interval counts from; none until a fetch after the one that filled the set.
  std::optional<std::chrono::steady_clock::time_point> last_fetch_ GUARDED_BY(mu_);
  std::optional<Error> last_error_ GUARDED_BY(mu_);  // of the last fetch, when it failed
};

}  // namespace imgmcp::oauth
