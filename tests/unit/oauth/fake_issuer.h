// A fake authorization server for the resource-server tests: documents by URL behind an
// oauth::FetchFunction, counting the fetches. Thread-safe (the concurrency tests fetch from many
// threads).
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "common/json.h"
#include "server/oauth/oauth_options.h"

namespace imgmcp::oauth::testing {

inline constexpr char kIssuer[] = "https://issuer.test";
inline constexpr char kJwksUri[] = "https://issuer.test/jwks";

class FakeIssuer {
 public:
  FakeIssuer() {
    Serve("https://issuer.test/.well-known/oauth-authorization-server",
          Json{{"issuer", kIssuer}, {"jwks_uri", kJwksUri}}.dump());
    SetKeys(Json::array());
  }

  void Serve(const std::string& url, std::string body, int status = 200) {
    std::lock_guard lock(mu_);
    documents_[url] = FetchedDocument{status, std::move(body)};
  }
  void Remove(const std::string& url) {
    std::lock_guard lock(mu_);
    documents_.erase(url);
  }
  void SetKeys(const Json& keys) { Serve(kJwksUri, Json{{"keys", keys}}.dump()); }

  int fetches(const std::string& url) {
    std::lock_guard lock(mu_);
    return counts_[url];
  }

  FetchFunction Function() {
    return [this](const std::string& url) -> Result<FetchedDocument> {
      std::lock_guard lock(mu_);
      ++counts_[url];
      const auto it = documents_.find(url);
      if (it == documents_.end()) return FetchedDocument{404, "{}"};
      return it->second;
    };
  }

 private:
  std::mutex mu_;  // guards documents_ and counts_
  std::map<std::string, FetchedDocument> documents_;
  std::map<std::string, int> counts_;
};

}  // namespace imgmcp::oauth::testing
