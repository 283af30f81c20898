#include "server/oauth/principal_cache.h"

#include <utility>

#include "common/sha256.h"

namespace imgmcp::oauth {

std::optional<Result<Principal>> PrincipalCache::Find(std::string_view token,
                                                      std::chrono::steady_clock::time_point now) {
  const std::string key = Sha256Hex(token);
  MutexLock lock(mu_);
  const auto entry = entries_.find(key);
  if (entry == entries_.end() || entry->second.expires <= now) return std::nullopt;
  return entry->second.decision;
}

void PrincipalCache::Keep(std::string_view token, Result<Principal> decision,
                          std::chrono::steady_clock::time_point expires,
                          std::chrono::steady_clock::time_point now) {
  std::string key = Sha256Hex(token);
  MutexLock lock(mu_);
  if (entries_.size() >= kMaxEntries) {
    std::erase_if(entries_, [now](const auto& entry) { return entry.second.expires <= now; });
    if (entries_.size() >= kMaxEntries) entries_.clear();
  }
  entries_.insert_or_assign(std::move(key), Entry{std::move(decision), expires});
}

}  // namespace imgmcp::oauth
