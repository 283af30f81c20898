#include "server/app/self_check.h"

#include <chrono>
#include <stop_token>
#include <string>

#include "common/log.h"
#include "mcp/self_check.h"
#include "server/app/wiring.h"
#include "server/netmod/net_module_loader.h"

namespace imgmcp::app {
namespace {

// The backend as its calls will find it, without making one: a networked backend's module is
// loaded now, as its first call would.
Result<std::string> CheckBackend(const Config& config, const BackendSelection& selection) {
  std::string line = "backend " + selection.backend->Name();
  if (!selection.endpoint.empty()) {
    RETURN_IF_ERROR(netmod::LoadNetModule());
    line += " at " + selection.endpoint + " (network module " + netmod::NetModulePath().string() +
            " loaded)";
  }
  line += ", model " + selection.backend->Model();
  if (!selection.details.empty()) line += ", " + selection.details;
  if (config.self_check_token) {
    if (selection.auth == nullptr) {
      return MakeError(ErrorCode::kFailedPrecondition,
                       "--self-check-token needs a networked backend (gemini or vertex)");
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    auto credential = selection.auth->Credential(std::stop_token(), deadline);
    if (!credential.ok()) return credential.error();
    line += ", token request ok";
  }
  return line;
}

// Waits for the store's background open (SQLite: open, migrate, sweep; PostgreSQL: connect and
// migrate) and says what it opened.
Result<std::string> CheckStore(const Config& config, session::DeferredSessionStore& store) {
  if (Status opened = store.WaitUntilOpen(); !opened.ok()) {
    return WithContext(opened.error(), "session store (" + DescribeStore(config) + ")");
  }
  return "store " + StoreName(config) + ", data dir " + config.data_dir.string();
}

// "backend …; store …; protocol …", or the first thing that failed.
Result<std::string> Check(const Config& config, WiredServer& wired) {
  ASSIGN_OR_RETURN(const std::string backend, CheckBackend(config, wired.backend()));
  ASSIGN_OR_RETURN(const std::string store, CheckStore(config, wired.store()));
  ASSIGN_OR_RETURN(const std::string protocol, mcp::RunSelfCheck(wired.server()));
  return backend + "; " + store + "; " + protocol;
}

}  // namespace

Status RunSelfCheck(const Config& config, WiredServer& wired) {
  auto summary = Check(config, wired);
  if (!summary.ok()) return WithContext(summary.error(), "self-check FAILED");
  log::Info("main", "self-check ok: " + *summary);
  return Status::Ok();
}

}  // namespace imgmcp::app
