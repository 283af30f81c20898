#include "common/allocator.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace imgmcp {
namespace {

// Arenas glibc may make (M_ARENA_MAX; its default is 8 per core): calls on other threads share
// them. With 2 arenas the HTTP workers queued on arena locks and small calls cost a quarter more
// CPU (bench P6) even beside the larger thread caches; 4 keep that cost and still hold idle memory
// within the bounds bench M2–M4 check (bench/RESULTS.md); glibc's default (16 here) broke M3's.
constexpr int kMallocArenas = 4;

constexpr char kTunablesVariable[] = "GLIBC_TUNABLES";

}  // namespace

// NOLINTNEXTLINE(concurrency-mt-unsafe): called once, before any thread starts (serve.cpp)
void BoundRetainedMemory() { mallopt(M_ARENA_MAX, kMallocArenas); }

void ReturnFreedMemory() { malloc_trim(0); }

std::string ServerMallocTunables(const char* current) {
  if (current == nullptr || *current == '\0') return kServerMallocTunables;
  if (std::strstr(current, "glibc.malloc.tcache_count=") != nullptr) return "";
  return std::string(current) + ":" + kServerMallocTunables;
}

void ReexecWithServerMallocTunables(char** argv) {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): before any thread starts (main.cpp)
  const std::string tunables = ServerMallocTunables(std::getenv(kTunablesVariable));
  if (tunables.empty()) return;
  const std::string setting = std::string(kTunablesVariable) + "=" + tunables;
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "GLIBC_TUNABLES=", std::strlen("GLIBC_TUNABLES=")) != 0) {
      env.push_back(*e);
    }
  }
  env.push_back(const_cast<char*>(setting.c_str()));
  env.push_back(nullptr);
  ::execve("/proc/self/exe", argv, env.data());  // returns only when it failed
}

}  // namespace imgmcp
