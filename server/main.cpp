// imgmcp entry point: flags and environment → wiring → run. No business rules here: the steps are
// named functions in server/app.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "common/allocator.h"
#include "common/log.h"
#include "server/app/audit_command.h"
#include "server/app/config.h"
#include "server/app/self_check.h"
#include "server/app/serve.h"
#include "server/app/wired_server.h"
#include "server/app/wiring.h"

namespace {

std::optional<std::string> GetEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

// Exit code 1 for a failure after the flags were understood.
int Fail(const imgmcp::Error& error) {
  imgmcp::log::Error("main", error.message);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace imgmcp;
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (app::IsAuditCommand(args)) return app::RunAuditCommand(args, GetEnv);
  auto config = app::ParseConfig(args, GetEnv);
  if (!config.ok()) {
    log::Error("main", config.error().message);
    return 2;  // a usage error
  }
  if (config->show_help) {
    std::fputs(app::HelpText().c_str(), stdout);  // stdout-ok: CLI mode, not serving MCP
    return 0;
  }
  if (config->show_version) {
    std::puts(app::VersionText().c_str());  // stdout-ok: CLI mode, not serving MCP
    return 0;
  }
  if (config->list_models) {
    auto text = app::ListModelsText(*config);
    if (!text.ok()) return Fail(text.error());
    std::fputs(text->c_str(), stdout);  // stdout-ok: CLI mode, not serving MCP
    return 0;
  }
  if (config->http_listen && !config->self_check) {
    ReexecWithServerMallocTunables(argv);  // first: it restarts the process (common/allocator.h)
  }
  app::PrepareProcess(*config);  // before any thread exists
  auto wired = app::WiredServer::Build(*config);
  if (!wired.ok()) return Fail(wired.error());

  Status done;
  if (config->self_check) {
    done = app::RunSelfCheck(*config, **wired);
  } else if (config->http_listen) {
    done = app::ServeHttpUntilStopped(*config, **wired);
  } else if (!app::ServeStdio(*config, **wired)) {
    std::_Exit(0);  // a call ignored cancellation: do not wait for it (state on disk is crash-safe)
  }
  return done.ok() ? 0 : Fail(done.error());
}
