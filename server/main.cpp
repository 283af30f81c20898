// imgmcp entry point: flags and environment → wiring → run. No business rules here.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "common/log.h"
#include "server/mcp/self_check.h"
#include "server/mcp/server.h"
#include "server/mcp/stdio_transport.h"
#include "server/tools/conformance_fixtures.h"

#ifndef IMGMCP_VERSION
#define IMGMCP_VERSION "0.0.0"
#endif

namespace {

constexpr char kUsage[] =
    "usage: imgmcp [options]\n"
    "\n"
    "An MCP server for stateful image generation and editing. Speaks MCP over stdio\n"
    "(newline-delimited JSON-RPC on stdin/stdout); logs go to stderr.\n"
    "\n"
    "options:\n"
    "  --data-dir DIR            where sessions and images are kept\n"
    "  --conformance-fixtures    add the MCP conformance suite's test tools, test:// resources\n"
    "                            and prompts (off by default)\n"
    "  --log-level LEVEL         stderr log level: debug, info, warning, error, off (default "
    "info)\n"
    "  --self-check              run the server's in-memory self-check and exit (0 = ok)\n"
    "  --version                 print the version and exit\n"
    "  --help                    print this help and exit\n";

struct Flags {
  std::optional<std::string> data_dir;
  bool conformance_fixtures = false;
  bool self_check = false;
  bool version = false;
  bool help = false;
};

// Accepts "--flag value" and "--flag=value". Returns false (after saying why) on a bad command
// line.
bool ParseFlags(int argc, char** argv, Flags* flags) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::optional<std::string> inline_value;
    if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string_view::npos) {
      inline_value = std::string(arg.substr(eq + 1));
      arg = arg.substr(0, eq);
    }
    auto value = [&](std::string* out) {
      if (inline_value) {
        *out = *inline_value;
        return true;
      }
      if (i + 1 >= argc) {
        imgmcp::log::Error("main", std::string(arg) + " needs a value");
        return false;
      }
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (arg == "--data-dir") {
      if (!value(&v)) return false;
      flags->data_dir = v;
    } else if (arg == "--log-level") {
      if (!value(&v)) return false;
      imgmcp::log::Level level;
      if (!imgmcp::log::ParseLevel(v, &level)) {
        imgmcp::log::Error("main", "--log-level must be debug, info, warning, error or off");
        return false;
      }
      imgmcp::log::SetMinLevel(level);
    } else if (arg == "--conformance-fixtures" && !inline_value) {
      flags->conformance_fixtures = true;
    } else if (arg == "--self-check" && !inline_value) {
      flags->self_check = true;
    } else if (arg == "--version" && !inline_value) {
      flags->version = true;
    } else if ((arg == "--help" || arg == "-h") && !inline_value) {
      flags->help = true;
    } else {
      imgmcp::log::Error("main", "unknown option " + std::string(argv[i]) + " (see --help)");
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) return 2;
  if (flags.help) {
    std::fputs(kUsage, stdout);  // stdout-ok: CLI mode, not serving MCP
    return 0;
  }
  if (flags.version) {
    std::fputs("imgmcp " IMGMCP_VERSION "\n", stdout);  // stdout-ok: CLI mode, not serving MCP
    return 0;
  }
  // A client that goes away must not kill us mid-write; the writer sees EPIPE instead.
  std::signal(SIGPIPE, SIG_IGN);

  imgmcp::mcp::ServerOptions options;
  options.name = "imgmcp";
  options.title = "imgmcp image generation and editing";
  options.version = IMGMCP_VERSION;
  imgmcp::mcp::McpServer server(options);

  if (flags.conformance_fixtures) {
    if (auto s = imgmcp::tools::RegisterConformanceFixtures(server); !s.ok()) {
      imgmcp::log::Error("main", "conformance fixtures: " + s.error().message);
      return 1;
    }
  }

  if (flags.self_check) {
    auto summary = imgmcp::mcp::RunSelfCheck(server);
    if (!summary.ok()) {
      imgmcp::log::Error("main", "self-check FAILED: " + summary.error().message);
      return 1;
    }
    imgmcp::log::Info("main", "self-check ok: " + summary.value());
    return 0;
  }

  imgmcp::mcp::StdioTransport transport(server, imgmcp::mcp::StdioOptions{});
  if (!transport.Run()) {
    // Some call ignored cancellation; do not wait for it (state on disk is crash-safe).
    std::_Exit(0);
  }
  return 0;
}
