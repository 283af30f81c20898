// Running the wired server: process set-up, then stdio or Streamable HTTP until the end.
#pragma once

#include "common/result.h"
#include "mcp/server.h"
#include "server/app/config.h"
#include "server/app/wired_server.h"

namespace imgmcp::app {

// Call first, before any thread exists: bounds malloc's arenas (BoundRetainedMemory), sets the log
// level, logs ConfigWarnings, ignores SIGPIPE (a client that goes away must not kill us
// mid-write; the writer sees EPIPE instead) and, unless it is a self-check, blocks SIGINT and
// SIGTERM so that every thread started later inherits the block and only the waiter of
// ServeHttpUntilStopped or ServeStdio receives them (a worker thread would otherwise die of them).
void PrepareProcess(const Config& config);

// Serves Streamable HTTP (config.http_listen must be set), with /readyz from the store's
// readiness (readiness_probe.h), until SIGINT or SIGTERM — then drains (drain.h) and stops — or
// until the listener fails. Errors start with "--http: " (e.g. the network module cannot be
// loaded).
Status ServeHttpUntilStopped(const Config& config, WiredServer& wired);

// Serves MCP over stdin/stdout until EOF, or until SIGINT or SIGTERM: then no more input is read
// and calls in flight get --drain-timeout to finish before they are cancelled (a second signal
// exits at once). false: a call ignored cancellation and is still running; the caller should then
// exit without waiting for it (the state on disk is crash-safe).
bool ServeStdio(const Config& config, WiredServer& wired);

}  // namespace imgmcp::app
