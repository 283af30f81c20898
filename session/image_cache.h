// A bounded LRU cache of recent image bytes, keyed by (session, version). Version numbers are
// never reused within a data dir, so an entry can only go stale by being cleared or pruned, and
// those paths erase it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/thread_annotations.h"

namespace imgmcp::session {

class ImageCache {
 public:
  explicit ImageCache(size_t capacity_bytes) : capacity_(capacity_bytes) {}
  ImageCache(const ImageCache&) = delete;
  ImageCache& operator=(const ImageCache&) = delete;

  // nullptr when absent, or when both `expected_sha256` and the entry's recorded sha256 are
  // known and differ (the caller asks for other bytes than these). Marks the entry most recently
  // used.
  std::shared_ptr<const std::string> Get(const std::string& session_id, int64_t version,
                                         std::string_view expected_sha256 = {});
  // `sha256` is the hex digest of `bytes` when the caller has it (so a hit needs no rehash).
  // Entries larger than the whole capacity are not cached. Evicts least recently used entries.
  void Put(const std::string& session_id, int64_t version, std::shared_ptr<const std::string> bytes,
           std::string sha256 = {});
  void Erase(const std::string& session_id, int64_t version);
  void EraseSession(const std::string& session_id);

  size_t SizeBytes() const;
  size_t EntryCount() const;

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const std::string> bytes;
    std::string sha256;  // empty when unknown
  };
  static std::string Key(const std::string& session_id, int64_t version);
  void EraseLocked(std::list<Entry>::iterator it) REQUIRES(mu_);

  const size_t capacity_;
  mutable Mutex mu_;                      // guards lru_, index_ and size_
  std::list<Entry> lru_ GUARDED_BY(mu_);  // front = most recently used
  std::unordered_map<std::string, std::list<Entry>::iterator> index_ GUARDED_BY(mu_);
  size_t size_ GUARDED_BY(mu_) = 0;
};

}  // namespace imgmcp::session
