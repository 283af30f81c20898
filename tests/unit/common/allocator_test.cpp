// The server's GLIBC_TUNABLES (common/allocator.h): the tcache setting added to what the
// environment holds, and nothing changed when a tcache_count is set already. That the server
// really runs with it: tests/integration/test_memory_rss.py.
#include "common/allocator.h"

#include <gtest/gtest.h>

#include <string>

namespace imgmcp {
namespace {

TEST(ServerMallocTunablesTest, AddsTheThreadCacheSettingToWhatIsThere) {
  EXPECT_EQ(ServerMallocTunables(nullptr), "glibc.malloc.tcache_count=64");
  EXPECT_EQ(ServerMallocTunables(""), "glibc.malloc.tcache_count=64");
  EXPECT_EQ(ServerMallocTunables("glibc.malloc.trim_threshold=1000000"),
            "glibc.malloc.trim_threshold=1000000:glibc.malloc.tcache_count=64");
}

TEST(ServerMallocTunablesTest, AThreadCacheCountSetAlreadyStands) {
  // The operator's own, and the re-executed process's (which must not re-execute again).
  EXPECT_EQ(ServerMallocTunables("glibc.malloc.tcache_count=7"), "");
  EXPECT_EQ(ServerMallocTunables(std::string(kServerMallocTunables).c_str()), "");
  EXPECT_EQ(ServerMallocTunables("glibc.malloc.trim_threshold=1:glibc.malloc.tcache_count=64"), "");
}

}  // namespace
}  // namespace imgmcp
