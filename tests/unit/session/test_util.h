// Shared helpers for session tests: a temp data dir, a controllable clock, version builders.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>

#include "common/clock.h"
#include "session/session_store.h"
#include "tests/unit/temp_dir.h"

namespace imgmcp::session::testing {

// How long a test waits for something that should happen quickly.
inline constexpr auto kWait = std::chrono::seconds(20);

using test_util::TempDir;  // tests/unit/temp_dir.h

// Wall time set by the test; steady time is real.
class FakeClock final : public Clock {
 public:
  FakeClock() : wall_ms_(1'800'000'000'000) {}
  std::chrono::steady_clock::time_point SteadyNow() const override {
    return std::chrono::steady_clock::now();
  }
  std::chrono::system_clock::time_point WallNow() const override {
    return std::chrono::system_clock::time_point(std::chrono::milliseconds(wall_ms_.load()));
  }
  void Advance(std::chrono::milliseconds d) { wall_ms_ += d.count(); }

 private:
  std::atomic<int64_t> wall_ms_;  // atomic: read by store threads, advanced by the test
};

inline NewVersion MakeVersion(const std::string& bytes, std::optional<int64_t> parent = {},
                              const std::string& prompt = "p", const std::string& ext = ".png") {
  NewVersion v;
  v.bytes = bytes;
  v.mime_type = ext == ".jpg" ? "image/jpeg" : "image/png";
  v.file_extension = ext;
  v.width = 4;
  v.height = 3;
  v.operation = parent.has_value() ? "edit" : "generate";
  v.prompt = prompt;
  v.parent = parent;
  v.backend = "local";
  v.model = "local-test";
  return v;
}

inline int ModeOf(const std::filesystem::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return -1;
  return static_cast<int>(st.st_mode & 0777);
}

}  // namespace imgmcp::session::testing
