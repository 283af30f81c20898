// imgmcp entry point: flags and environment → wiring → run. No business rules here.
#include <cstring>

#include "common/log.h"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--self-check") == 0) {
      imgmcp::log::Info("main", "self-check ok");
      return 0;
    }
  }
  imgmcp::log::Error("main", "the MCP server is not wired yet; try --self-check");
  return 2;
}
