#include "server/app/self_check.h"

#include <string>

#include "common/log.h"
#include "server/app/wiring.h"
#include "server/mcp/self_check.h"
#include "server/netmod/net_module_loader.h"

namespace imgmcp::app {
namespace {

// The backend as its calls will find it, without making one: a networked backend's module is
// loaded now, as its first call would.
Result<std::string> CheckBackend(const BackendSelection& selection) {
  std::string line = "backend " + selection.backend->Name();
  if (!selection.endpoint.empty()) {
    RETURN_IF_ERROR(netmod::LoadNetModule());
    line += " at " + selection.endpoint + " (network module " + netmod::NetModulePath().string() +
            " loaded)";
  }
  return line + ", model " + selection.backend->Model();
}

// Waits for the store's background open (SQLite: open, migrate, sweep; PostgreSQL: connect and
// migrate) and says what it opened.
Result<std::string> CheckStore(const Config& config, session::DeferredSessionStore& store) {
  if (Status opened = store.WaitUntilOpen(); !opened.ok()) {
    return Error(opened.error().code,
                 "session store (" + DescribeStore(config) + "): " + opened.error().message);
  }
  return "store " + StoreName(config) + ", data dir " + config.data_dir.string();
}

Status Failed(const Error& error) {
  return Error(error.code, "self-check FAILED: " + error.message);
}

}  // namespace

Status RunSelfCheck(const Config& config, WiredServer& wired) {
  auto backend = CheckBackend(wired.backend());
  if (!backend.ok()) return Failed(backend.error());
  auto store = CheckStore(config, wired.store());
  if (!store.ok()) return Failed(store.error());
  auto protocol = mcp::RunSelfCheck(wired.server());
  if (!protocol.ok()) return Failed(protocol.error());
  log::Info("main", "self-check ok: " + *backend + "; " + *store + "; " + *protocol);
  return Status::Ok();
}

}  // namespace imgmcp::app
