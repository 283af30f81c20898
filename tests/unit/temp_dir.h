// A fresh directory under $TMPDIR (or /tmp) for a unit test, by its canonical path (the rooted
// writes of save_to compare real paths); removed with everything in it at destruction.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace imgmcp::test_util {

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string templ =
        std::string(base != nullptr && *base ? base : "/tmp") + "/imgmcp-unit-test-XXXXXX";
    path_ = ::mkdtemp(templ.data()) != nullptr ? std::filesystem::canonical(templ)
                                               : std::filesystem::path();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace imgmcp::test_util
