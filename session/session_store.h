// SessionStore: durable, strictly ordered chains of image versions (DESIGN.md §3).
//
// The contract the tools rely on. Everything here is thread-safe; the in-process FIFO turn and the
// cross-process flock together make one session's edits run one at a time, in arrival order.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/cancellation.h"
#include "common/clock.h"
#include "common/result.h"

namespace imgmcp::session {

struct VersionInfo {
  std::string session_id;
  int64_t version = 0;
  std::optional<int64_t> parent;  // the version this one was made from, if any
  std::string operation;          // "generate", "edit", "import", "revert"
  std::string prompt;             // exactly as given
  std::string mime_type;
  int64_t bytes = 0;
  std::string sha256;
  std::filesystem::path path;     // absolute path of the image file
  int width = 0;
  int height = 0;
  std::string backend;            // "gemini" or "local"
  std::string model;
  std::string created_at;         // RFC 3339 UTC
};

struct SessionSummary {
  std::string session_id;
  int64_t current_version = 0;    // 0 when the session has no images
  std::optional<VersionInfo> current;
  std::string updated_at;
};

struct SessionPage {
  std::vector<SessionSummary> sessions;   // newest activity first
  std::optional<std::string> next_cursor;
};

// What a commit writes. bytes are stored exactly as given (no re-encoding).
struct NewVersion {
  std::string bytes;
  std::string mime_type;
  std::string file_extension;  // ".png", ".jpg", …
  int width = 0;
  int height = 0;
  std::string operation;
  std::string prompt;
  std::optional<int64_t> parent;
  std::string backend;
  std::string model;
};

struct StoreOptions {
  std::filesystem::path data_dir;
  int max_versions_per_session = 100;  // older versions beyond this are pruned (0 = keep all)
  int idle_days = 0;                   // sessions idle longer are expired at open (0 = never)
  size_t cache_bytes = 64u << 20;      // in-memory cache of recent image bytes
  int max_concurrent_backend_calls = 8;
};

struct TurnOptions {
  CancellationToken cancel;                           // leaving the queue on cancellation
  std::function<void(int ahead)> on_queued;           // called when waiting, with edits ahead
};

// Exclusive, ordered access to one session for the duration of an edit. Destroying it releases the
// turn (in-process and cross-process). Not thread-safe itself: one edit owns it.
class EditTurn {
 public:
  virtual ~EditTurn() = default;
  // The session's current version as of the start of the turn (and after each Commit).
  virtual std::optional<VersionInfo> Current() const = 0;
  // The highest version number ever issued in this session (also counts cleared ones).
  virtual int64_t LastIssuedVersion() const = 0;
  // Writes file (temp, fsync, rename, fsync dir) then commits the row: version LastIssued+1.
  virtual Result<VersionInfo> Commit(const NewVersion& version) = 0;
  // Clears the session's images (reset); the counter keeps counting.
  virtual Status Clear() = 0;
};

class SessionStore {
 public:
  virtual ~SessionStore() = default;

  // Waits for this session's turn (FIFO in arrival order), honouring cancellation. Creates the
  // session if it does not exist.
  virtual Result<std::unique_ptr<EditTurn>> AcquireTurn(const std::string& session_id,
                                                        const TurnOptions& options) = 0;

  // Reads without taking a turn. version nullopt = current. kNotFound for unknown session/version.
  virtual Result<VersionInfo> GetVersion(const std::string& session_id,
                                         std::optional<int64_t> version) = 0;
  virtual Result<std::string> ReadImage(const VersionInfo& version) = 0;  // checks sha256
  virtual Result<std::vector<VersionInfo>> History(const std::string& session_id) = 0;
  virtual Result<SessionPage> ListSessions(const std::optional<std::string>& cursor,
                                           int limit) = 0;
  virtual bool SessionExists(const std::string& session_id) = 0;

  // Caps concurrent backend calls across sessions: runs fn when a slot is free.
  virtual void RunWithBackendSlot(const std::function<void()>& fn) = 0;
};

// Opens (creating if needed) the store in options.data_dir: migrates the schema, sweeps orphans.
Result<std::unique_ptr<SessionStore>> OpenSessionStore(const StoreOptions& options,
                                                       const Clock& clock);

}  // namespace imgmcp::session
