#include "server/app/self_check.h"

#include <string>

#include "common/log.h"
#include "server/mcp/self_check.h"

namespace imgmcp::app {

Status RunSelfCheck(const Config&, WiredServer& wired) {
  auto summary = mcp::RunSelfCheck(wired.server());
  if (!summary.ok()) {
    return Error(summary.error().code, "self-check FAILED: " + summary.error().message);
  }
  log::Info("main", "self-check ok: " + *summary);
  return Status::Ok();
}

}  // namespace imgmcp::app
