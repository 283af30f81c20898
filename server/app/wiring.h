// Factories that turn a Config into the objects main.cpp wires together. No business rules:
// just choices of implementation and option mapping.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "common/timer_thread.h"
#include "gemini_client/batch_client.h"
#include "gemini_client/request_auth.h"
#include "imaging/image_backend.h"
#include "metrics/metrics.h"
#include "server/app/config.h"
#include "server/http/http_listener.h"
#include "server/tools/image_input.h"
#include "server/tools/image_tools.h"
#include "session/deferred_session_store.h"
#include "session/session_store.h"

namespace imgmcp::mcp {
class McpServer;
}  // namespace imgmcp::mcp

namespace imgmcp::app {

struct BackendSelection {
  std::unique_ptr<imaging::ImageBackend> backend;
  std::string note;  // shown in every result when the choice was implicit, e.g. no API key
  // Where the backend's calls go over the network (gemini: the base URL, which carries no key);
  // empty for the offline local backend.
  std::string endpoint;
  // For --self-check: "project P, location L, credential …, proxy …" (never a secret), and the
  // credential of a Vertex backend, to make one token request with.
  std::string details;
  std::shared_ptr<gemini::RequestAuth> auth;
  // The Gemini API backend's Batch API client (generate_image delivery "batch"); nullptr for the
  // local backend and for Vertex AI, `batch_refusal` then saying why.
  std::unique_ptr<gemini::BatchClient> batch;
  std::string batch_refusal =
      "delivery \"batch\" needs the Gemini API backend (--backend gemini with GEMINI_API_KEY); "
      "the local backend answers at once";
};

// --backend auto|gemini|vertex|local: auto picks gemini when GEMINI_API_KEY is set, else vertex
// when GOOGLE_CLOUD_PROJECT is set and credentials are configured (saying so on stderr), else
// local.
// `metrics` (may be null) counts the backend's calls and retries; `timers` (may be null: then only
// the sockets' timeouts bound a call) aborts a call at its deadline.
Result<BackendSelection> MakeBackend(const Config& config, metrics::Metrics* metrics = nullptr,
                                     TimerThread* timers = nullptr);

// The model table in effect: the built-in one with --model-table merged over it. Errors name the
// file, the row and the key.
Result<std::vector<imaging::ModelCapabilities>> LoadModelTable(const Config& config);
// What --list-models prints: the table in effect (imaging::FormatModelTable) under a line that
// says where it came from.
Result<std::string> ListModelsText(const Config& config);

session::StoreOptions MakeStoreOptions(const Config& config);
// The store --store names, opening in the background once WiredServer::StartBackgroundWork or the
// first call that needs it begins the open (tool calls wait for it): what can be checked
// at once is (the data dir can be created, written and locked; the URL parses), so a server that
// could never work exits before answering anything. `clock` must outlive the store.
// `metrics` (may be null) counts turn waits and commits. `opened` (may be empty) is called on the
// opening thread with the store once it is open (the batch poller works on its task rows).
using StoreOpened = std::function<void(session::SessionStore& opened)>;
Result<std::unique_ptr<session::DeferredSessionStore>> OpenStore(
    const Config& config, const Clock& clock, metrics::Metrics* metrics = nullptr,
    StoreOpened opened = nullptr);
// For the start-up log line: "data dir …" or "PostgreSQL at host:port/db, local copies in …"
// (never the password).
std::string DescribeStore(const Config& config);
// "sqlite" or "PostgreSQL at host:port/db" (never the password).
std::string StoreName(const Config& config);
tools::ImageInputOptions MakeImageInputOptions(const Config& config);
tools::ImageToolsOptions MakeImageToolsOptions(const Config& config, std::string backend_note);
// Where save_to may write: the working directory (unless it is /) and --allow-write directories,
// never the data dir; with Config's IMGMCP_TEST_SAVE_* hooks.
tools::SaveOptions MakeSaveOptions(const Config& config);
// The Streamable HTTP transport's options (config.http_listen must be set).
http::HttpOptions MakeHttpOptions(const Config& config);

// Metrics are kept when a listener serves them, --http (at /metrics) or --metrics, unless
// --metrics off.
bool MetricsWanted(const Config& config);
// The --metrics listener's options (config.metrics_listen must be set): only GET /metrics (and
// /healthz), with the Host/Origin allow-list and bearer token of --http.
http::HttpOptions MakeMetricsHttpOptions(const Config& config);
// Loads the network module and starts the --metrics listener for `server`, serving `metrics`;
// logs "metrics at http://HOST:PORT/metrics". Errors start with "--metrics: ".
Result<std::unique_ptr<http::HttpListener>> StartMetricsListener(const Config& config,
                                                                 mcp::McpServer& server,
                                                                 metrics::Metrics* metrics);

// Things in a valid Config that an operator should hear about at start-up, one line each: an
// --allow-read or --allow-write directory that does not exist, an --allow-write inside the data
// dir, save_to with nowhere to write, HTTP on a non-loopback address without a token.
std::vector<std::string> ConfigWarnings(const Config& config);

}  // namespace imgmcp::app
