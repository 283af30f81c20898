#include "session/image_cache.h"

namespace imgmcp::session {

std::string ImageCache::Key(const std::string& session_id, int64_t version) {
  return session_id + '/' + std::to_string(version);  // ids never contain '/'
}

std::shared_ptr<const std::string> ImageCache::Get(const std::string& session_id, int64_t version,
                                                   std::string_view expected_sha256) {
  MutexLock lock(mu_);
  const auto it = index_.find(Key(session_id, version));
  if (it == index_.end()) return nullptr;
  const std::string& recorded = it->second->sha256;
  if (!expected_sha256.empty() && !recorded.empty() && recorded != expected_sha256) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->bytes;
}

void ImageCache::Put(const std::string& session_id, int64_t version,
                     std::shared_ptr<const std::string> bytes, std::string sha256) {
  if (!bytes || bytes->size() > capacity_) return;
  std::string key = Key(session_id, version);
  MutexLock lock(mu_);
  if (const auto it = index_.find(key); it != index_.end()) EraseLocked(it->second);
  size_ += bytes->size();
  lru_.push_front(Entry{key, std::move(bytes), std::move(sha256)});
  index_.emplace(std::move(key), lru_.begin());
  while (size_ > capacity_ && !lru_.empty()) EraseLocked(std::prev(lru_.end()));
}

void ImageCache::Erase(const std::string& session_id, int64_t version) {
  MutexLock lock(mu_);
  if (const auto it = index_.find(Key(session_id, version)); it != index_.end()) {
    EraseLocked(it->second);
  }
}

void ImageCache::EraseSession(const std::string& session_id) {
  const std::string prefix = session_id + '/';
  MutexLock lock(mu_);
  for (auto it = lru_.begin(); it != lru_.end();) {
    const auto next = std::next(it);
    if (it->key.compare(0, prefix.size(), prefix) == 0) EraseLocked(it);
    it = next;
  }
}

void ImageCache::EraseLocked(std::list<Entry>::iterator it) {
  size_ -= it->bytes->size();
  index_.erase(it->key);
  lru_.erase(it);
}

size_t ImageCache::SizeBytes() const {
  MutexLock lock(mu_);
  return size_;
}

size_t ImageCache::EntryCount() const {
  MutexLock lock(mu_);
  return lru_.size();
}

}  // namespace imgmcp::session
