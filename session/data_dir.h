// Where things live inside a data directory, and the session-id check that keeps ids from ever
// becoming anything but one plain path component. See session_store.h for the layout.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace imgmcp::session {

// ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ — no '/', never "." or "..".
bool IsValidSessionId(std::string_view id);

// ^\.[A-Za-z0-9]{1,8}$, e.g. ".png".
bool IsValidFileExtension(std::string_view ext);

class DataDirLayout {
 public:
  explicit DataDirLayout(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path DatabasePath() const { return root_ / "imgmcp.db"; }
  std::filesystem::path ImagesDir() const { return root_ / "images"; }
  std::filesystem::path LocksDir() const { return root_ / "locks"; }
  // The caller must have validated `session_id` with IsValidSessionId.
  std::filesystem::path SessionImageDir(const std::string& session_id) const {
    return ImagesDir() / session_id;
  }
  std::filesystem::path SessionLockPath(const std::string& session_id) const {
    return LocksDir() / (session_id + ".lock");
  }

  // "v<N><ext>", the file name of a version inside its session's image dir.
  static std::string VersionFileName(int64_t version, std::string_view ext);
  // Temp files start with this prefix; the start-up sweep deletes them.
  static constexpr std::string_view kTempPrefix = ".tmp-";

 private:
  std::filesystem::path root_;
};

}  // namespace imgmcp::session
