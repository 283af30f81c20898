// imgmcp's configuration: command-line flags and environment variables, parsed and checked in one
// place, from one table of flags that also writes --help. main.cpp turns a Config into wired
// objects; nothing else reads flags or the environment.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "server/http/listen_address.h"
#include "server/tools/image_tools.h"  // kDefaultMaxConcurrentBackendCalls

namespace imgmcp::app {

enum class BackendChoice { kAuto, kGemini, kVertex, kLocal };

struct Config {
  std::filesystem::path data_dir;
  BackendChoice backend = BackendChoice::kAuto;
  std::string gemini_api_key;  // from GEMINI_API_KEY only; never printed
  std::string gemini_base_url = "https://generativelanguage.googleapis.com";
  std::string gemini_model = "gemini-3.1-flash-lite-image";  // --model (--gemini-model)
  // --models / IMGMCP_MODELS: the models callers may choose; empty = every Gemini model of the
  // table that is not retired.
  std::vector<std::string> gemini_models;
  // --model-table / IMGMCP_MODEL_TABLE: a JSON file of rows merged over the built-in model table
  // (gemini_client/models.h); "" = the built-in table alone.
  std::string model_table_file;
  bool allow_retired = false;  // --allow-retired: retired models may be offered and called
  int chain_turns = tools::kDefaultChainTurns;  // --chain-turns
  // Vertex AI (--backend vertex; docs/generation.md, "Vertex AI").
  std::string vertex_project;              // --vertex-project / GOOGLE_CLOUD_PROJECT
  std::string vertex_location = "global";  // --vertex-location / GOOGLE_CLOUD_LOCATION
  std::string vertex_base_url;  // --vertex-base-url / IMGMCP_VERTEX_BASE_URL; "" = by location
  std::string vertex_api_key;   // GOOGLE_API_KEY: an express-mode key; never printed
  // Where Application Default Credentials are looked for (gemini_client/adc.h).
  std::string google_application_credentials;  // GOOGLE_APPLICATION_CREDENTIALS
  std::string cloudsdk_config;                 // CLOUDSDK_CONFIG
  std::string home;                            // HOME
  std::string gce_metadata_host;               // GCE_METADATA_HOST
  // Every outgoing call (Gemini, Vertex AI, token endpoints): proxies (lower-case variables win;
  // they may hold proxy passwords, so they are never printed) and an extra CA bundle.
  std::string https_proxy;  // HTTPS_PROXY / https_proxy
  std::string http_proxy;   // HTTP_PROXY / http_proxy
  std::string no_proxy;     // NO_PROXY / no_proxy
  std::string ca_file;      // --ca-file / SSL_CERT_FILE
  int gemini_timeout_seconds = 300;
  std::vector<std::filesystem::path> allow_read;  // extra roots for {path} inputs
  // Extra roots save_to may write below (--allow-write, repeatable; IMGMCP_ALLOW_WRITE, separated
  // by ':'), besides the working directory.
  std::vector<std::filesystem::path> allow_write;
  int preview_max_edge = 768;
  int64_t preview_max_bytes = 600 * 1024;
  int64_t max_image_bytes = 64LL << 20;
  int64_t max_pixels = 50'000'000;
  int max_versions = 100;
  int idle_days = 0;
  int max_backend_calls = tools::kDefaultMaxConcurrentBackendCalls;
  int max_inflight_mb = tools::kDefaultMaxInflightMb;  // --max-inflight-mb (0 = no limit)
  double budget_usd_per_day = 0;                       // --budget-usd-per-day (0 = none)
  double budget_usd_per_session = 0;                   // --budget-usd-per-session (0 = none)
  double budget_usd_per_user_day = 0;                  // --budget-usd-per-user-day (0 = none)
  int rate_limit_per_user = 0;           // --rate-limit-per-user, calls/min (0 = none)
  int max_calls_per_user = 0;            // --max-calls-per-user (0 = none)
  int audit_days = 90;                   // --audit-days (0 = no audit trail)
  int gallery_link_ttl_seconds = 86400;  // --gallery-link-ttl
  int64_t cache_mb = 64;
  // --store / IMGMCP_STORE: "sqlite" (the embedded store in data_dir) or a postgresql:// URL
  // (shared by replicas; may carry a password, so it is never logged). store_pool: the most
  // connections to PostgreSQL at once (--store-pool / IMGMCP_STORE_POOL).
  std::string store = "sqlite";
  bool store_on_command_line = false;  // from --store (visible in /proc/PID/cmdline), not the env
  int store_pool = 10;
  std::optional<http::ListenAddress> http_listen;  // --http [HOST:]PORT, checked when parsed
  std::string auth_token;                          // --auth-token or IMGMCP_AUTH_TOKEN
  std::vector<std::string> oauth_issuers;          // --oauth-issuer (repeatable)
  std::string oauth_resource;                      // --oauth-resource; "" = the listener's /mcp
  std::string oauth_read_scope = "imgmcp:read";    // --oauth-scopes READ,WRITE
  std::string oauth_introspection_url;             // --oauth-introspection-url (opaque tokens)
  std::string oauth_client_id;                     // --oauth-client-id, for introspection
  std::string oauth_client_secret;                 // IMGMCP_OAUTH_CLIENT_SECRET (never a flag)
  std::string oauth_write_scope = "imgmcp:write";
  // --metrics [HOST:]PORT / IMGMCP_METRICS: a listener serving only GET /metrics (also in stdio
  // mode). With --http, /metrics is served on that listener as well.
  std::optional<http::ListenAddress> metrics_listen;
  bool metrics_off = false;  // --metrics off: nothing is counted, /metrics is not served
  // Host names and addresses accepted in Host/Origin besides loopback and the bind host:
  // --allow-host (repeatable) and IMGMCP_ALLOW_HOSTS (comma-separated).
  std::vector<std::string> allow_hosts;
  int http_header_timeout_seconds = 10;  // a request head must arrive whole within this
  int http_max_sessions = 4096;          // HTTP sessions at once (the longest idle is evicted)
  // SIGTERM/SIGINT: how long the drain may take before calls still running are cancelled
  // (server/app/drain.h over HTTP, ServeStdio over stdio); --drain-timeout / IMGMCP_DRAIN_TIMEOUT.
  int drain_timeout_seconds = 30;
  // How long a finished task (MCP tasks extension) stays readable; --task-ttl / IMGMCP_TASK_TTL.
  int task_ttl_seconds = 3600;
  int max_tasks_per_owner = 32;  // --max-tasks-per-owner
  // generate_image delivery "batch" (server/app/batch_delivery.h): calls of one model within this
  // window go into one Gemini batch job of at most batch_max requests, first read batch_poll
  // seconds after its creation.
  int64_t batch_window_ms = 10'000;  // --batch-window SECONDS (decimals allowed)
  int batch_max = 100;               // --batch-max
  int64_t batch_poll_ms = 30'000;    // --batch-poll SECONDS (decimals allowed)
  bool conformance_fixtures = false;
  std::string log_level = "info";   // a name log::ParseLevel accepts
  std::string log_format = "text";  // --log-format / IMGMCP_LOG_FORMAT: text or json
  bool show_help = false;
  bool show_version = false;
  bool list_models = false;  // --list-models: print the model table in effect and exit
  bool self_check = false;
  bool self_check_token = false;  // --self-check-token: --self-check plus one token request
  // Test hooks, kept out of --help. IMGMCP_TEST_STORE_OPEN_GATE: the background open of the session
  // store first waits until this file (a FIFO) has been opened for writing and closed again, so a
  // test decides when the open may finish. Empty in production.
  std::filesystem::path test_store_open_gate;
  // IMGMCP_TEST_SAVE_GATES: a directory; every save_to copy waits at "before-walk" (before it
  // opens the target's directories) and at "before-write" (after, before writing the file) until
  // the FIFO of that name in it, when there is one, has been opened for writing and closed.
  std::filesystem::path test_save_gates;
  // IMGMCP_TEST_SAVE_DISK_FULL: every write of a save_to copy fails with ENOSPC.
  bool test_save_disk_full = false;
};

using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Parses argv (without argv[0]) and the environment. A flag given on the command line wins over its
// environment variable (a repeatable flag adds to it); an empty variable counts as unset. Errors
// name the flag or variable and what it takes.
Result<Config> ParseConfig(const std::vector<std::string>& args, const EnvLookup& env);

// The data directory when neither --data-dir nor IMGMCP_DATA_DIR is given: $XDG_DATA_HOME/imgmcp,
// else ~/.local/share/imgmcp (README.md, "Configuration").
std::filesystem::path DefaultDataDir(const EnvLookup& env);

// The --help text, written from the same table ParseConfig reads.
std::string HelpText();
std::string VersionText();

}  // namespace imgmcp::app
