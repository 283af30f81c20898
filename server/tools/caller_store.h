// The session store as a request's caller (mcp/caller.h) sees it: their principal's sessions
// only, and only one of them for a gallery link's bearer (session/principal_session_store.h).
// Every tool and resource read goes through one of these.
#pragma once

#include "mcp/caller.h"
#include "session/principal_session_store.h"

namespace imgmcp::tools {

class CallerStore : public session::StoreOfPrincipal {
 public:
  CallerStore(session::SessionStore& store, const mcp::Caller& caller)
      : StoreOfPrincipal(store, caller.principal, caller.only_session) {}
};

}  // namespace imgmcp::tools
