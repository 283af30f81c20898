// The drain of an HTTP server on SIGTERM or SIGINT (docs/design.md, "Over HTTP"; README.md,
// "Draining and rolling restarts"), so a replica behind a load balancer leaves without failing a
// call:
//   1. /readyz answers 503 at once; every request is still served, so the balancer's health check
//      sees the 503 and stops sending new ones (the notice window). A server whose /readyz was
//      never asked has no balancer watching it and skips this step;
//   2. once no request besides health checks has come for kQuietWindow (or kMaxNoticeWindow has
//      passed, whoever keeps asking), new calls and tasks are refused (503 before anything is
//      dispatched: a proxy retries them on another replica) and the calls and tasks in flight
//      may finish;
//   3. at `timeout` from the signal, whatever still runs is cancelled (its turn is released and
//      nothing of it is committed; a task ends failed, saying the server shut down); streams get
//      an SSE `retry:` hint and close; Stop().
// Each step is logged to stderr. Another SIGTERM or SIGINT during the drain skips to step 3.
#pragma once

#include <signal.h>

#include <chrono>

#include "mcp/task_runner.h"
#include "server/http/http_listener.h"

namespace imgmcp::app {

inline constexpr std::chrono::milliseconds kQuietWindow{2000};
// The notice window ends after this at the latest (or at half the drain timeout, if that is
// sooner), even while a client keeps asking more often than kQuietWindow: the calls in flight
// keep the rest of the timeout to finish.
inline constexpr std::chrono::milliseconds kMaxNoticeWindow{10000};

// Runs steps 1–2 on `listener` (and the server's `tasks`) and returns when step 3 is due; the
// caller then ends the tasks still running (TaskRunner::Shutdown) and calls listener.Stop().
// `first_signal` names the signal that started it (for the log); `signals` are the (blocked)
// signals that cut it short.
void Drain(http::HttpListener& listener, mcp::TaskRunner& tasks, std::chrono::seconds timeout,
           int first_signal, const sigset_t& signals);

}  // namespace imgmcp::app
