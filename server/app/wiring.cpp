#include "server/app/wiring.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include "common/log.h"
#include "common/posix_io.h"
#include "common/unique_fd.h"
#include "gemini_client/adc.h"
#include "gemini_client/gemini_client.h"
#include "gemini_client/models.h"
#include "gemini_client/token_cache.h"
#include "imaging/model_table.h"
#include "local_backend/local_backend.h"
#include "mcp/server.h"
#include "server/app/oauth_fetch.h"
#include "server/netmod/net_module_loader.h"
#include "session/file_io.h"
#include "session/postgres/postgres_session_store.h"
#include "session/sqlite/sqlite_session_store.h"

namespace imgmcp::app {
namespace {

// Blocks until a writer has opened `gate` (a FIFO) and closed it again.
Status WaitForGate(const std::filesystem::path& gate) {
  UniqueFd fd;
  do {
    fd.Reset(::open(gate.c_str(), O_RDONLY | O_CLOEXEC));  // returns once a writer opens it
  } while (!fd.valid() && errno == EINTR);
  if (!fd.valid()) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "IMGMCP_TEST_STORE_OPEN_GATE " + gate.string() + ": " + ErrnoText(errno));
  }
  char buffer[64];
  ssize_t n;
  do {
    n = ::read(fd.get(), buffer, sizeof buffer);  // 0: every writer has closed it
  } while (n > 0 || (n < 0 && errno == EINTR));
  return Status::Ok();
}

// Config's test hooks, run by the store's background open before the store opens (none in
// production).
Status RunStoreOpenTestHooks(const std::filesystem::path& gate) {
  if (gate.empty()) return Status::Ok();
  log::Warn("main", "IMGMCP_TEST_STORE_OPEN_GATE: the session store opens once " + gate.string() +
                        " has been written and closed");
  return WaitForGate(gate);
}

// IMGMCP_TEST_SAVE_GATES: at each point of a save, waits on the FIFO of that name in `gates`
// when there is one.
std::function<void(std::string_view)> SaveGates(const std::filesystem::path& gates) {
  if (gates.empty()) return nullptr;
  log::Warn("main",
            "IMGMCP_TEST_SAVE_GATES: save_to copies wait at the FIFOs in " + gates.string());
  return [gates](std::string_view point) {
    const std::filesystem::path fifo = gates / std::string(point);
    struct stat st {};
    if (::lstat(fifo.c_str(), &st) != 0 || !S_ISFIFO(st.st_mode)) return;
    if (Status s = WaitForGate(fifo); !s.ok()) log::Warn("main", s.error().message);
  };
}

// A warning about `dir` given with `flag` when it does not exist (`missing` said after) or is
// not a directory (`not_dir` said after); "" when it is one.
std::string DirectoryWarning(std::string_view flag, const std::filesystem::path& dir,
                             std::string_view missing, std::string_view not_dir) {
  std::error_code ec;
  const auto status = std::filesystem::status(dir, ec);
  if (ec || !std::filesystem::exists(status)) {
    return std::string(flag) + " " + dir.string() + ": no such directory" +
           (ec && ec != std::errc::no_such_file_or_directory ? " (" + ec.message() + ")"
                                                             : std::string()) +
           "; " + std::string(missing);
  }
  if (!std::filesystem::is_directory(status)) {
    return std::string(flag) + " " + dir.string() + " is not a directory; " + std::string(not_dir);
  }
  return "";
}

// Warnings about where save_to may write: --allow-write directories that are missing or inside
// the data dir, and a working directory of / (never a write root) with no other.
void AddWriteWarnings(const Config& config, std::vector<std::string>& warnings) {
  std::error_code ec;
  const auto data = std::filesystem::weakly_canonical(config.data_dir, ec);
  for (const auto& dir : config.allow_write) {
    if (std::string w =
            DirectoryWarning("--allow-write", dir, "nothing is written below it until it exists",
                             "copies are written only below directories");
        !w.empty()) {
      warnings.push_back(std::move(w));
      continue;
    }
    const auto canonical = std::filesystem::weakly_canonical(dir, ec);
    const auto rel = canonical.lexically_relative(data);
    if (!rel.empty() && *rel.begin() != "..") {
      warnings.push_back("--allow-write " + dir.string() + " is inside the data dir " +
                         data.string() + "; save_to never writes there");
    }
  }
  if (std::filesystem::current_path(ec) == "/" && config.allow_write.empty()) {
    warnings.push_back(
        "the working directory is /, which save_to never writes below, and no --allow-write "
        "directory is given: save_to can write nowhere");
  }
}

gemini::AdcEnvironment AdcEnvironmentOf(const Config& config) {
  gemini::AdcEnvironment env;
  env.google_application_credentials = config.google_application_credentials;
  env.cloudsdk_config = config.cloudsdk_config;
  env.home = config.home;
  env.gce_metadata_host = config.gce_metadata_host;
  return env;
}

// What --backend auto comes to (and says so on stderr when it picks vertex).
BackendChoice ResolveBackend(const Config& config) {
  if (config.backend != BackendChoice::kAuto) return config.backend;
  if (!config.gemini_api_key.empty()) return BackendChoice::kGemini;
  if (!config.vertex_project.empty() && gemini::CredentialsConfigured(AdcEnvironmentOf(config))) {
    log::Info("main", "backend auto: using vertex (Vertex AI, project " + config.vertex_project +
                          "): GOOGLE_CLOUD_PROJECT is set, Application Default Credentials are "
                          "configured and GEMINI_API_KEY is not");
    return BackendChoice::kVertex;
  }
  return BackendChoice::kLocal;
}

// The options every Gemini-path client shares: the model table, model, models, timeouts, CAs,
// proxies, metrics.
gemini::GeminiClientOptions CommonClientOptions(const Config& config,
                                                std::vector<imaging::ModelCapabilities> table,
                                                metrics::Metrics* metrics, TimerThread* timers) {
  gemini::GeminiClientOptions options;
  options.metrics = metrics;
  options.timers = timers;
  options.model_table = std::move(table);
  options.allow_retired = config.allow_retired;
  options.model = config.gemini_model;
  options.models = config.gemini_models;
  options.call_timeout = std::chrono::seconds(config.gemini_timeout_seconds);
  options.extra_ca_file = config.ca_file;
  options.proxies = {config.https_proxy, config.http_proxy, config.no_proxy};
  return options;
}

Result<BackendSelection> FinishClient(gemini::GeminiClientOptions options,
                                      BackendSelection selection) {
  // The HTTP code loads on the first call; that it is installed is checked now.
  RETURN_IF_ERROR(netmod::CheckNetModuleInstalled());
  selection.endpoint = options.base_url;
  selection.auth = options.auth;
  auto batch = gemini::BatchClient::Create(options, &netmod::SendHttpViaNetModule);
  if (batch.ok()) {
    selection.batch = std::move(*batch);
    selection.batch_refusal.clear();
  } else {
    selection.batch_refusal = batch.error().message;
  }
  ASSIGN_OR_RETURN(auto client,
                   gemini::GeminiClient::Create(std::move(options), &netmod::PostJsonViaNetModule));
  selection.details += std::string(selection.details.empty() ? "" : ", ") + "credential " +
                       client->DescribeAuth() + ", proxy " + client->DescribeProxy();
  selection.backend = std::move(client);
  return selection;
}

Result<BackendSelection> MakeGeminiBackend(const Config& config,
                                           std::vector<imaging::ModelCapabilities> table,
                                           metrics::Metrics* metrics, TimerThread* timers) {
  gemini::GeminiClientOptions options =
      CommonClientOptions(config, std::move(table), metrics, timers);
  options.api_key = config.gemini_api_key;
  options.base_url = config.gemini_base_url;
  return FinishClient(std::move(options), BackendSelection{});
}

// Vertex AI: the project's path with ADC tokens, or express mode with GOOGLE_API_KEY when no
// project is set.
Result<BackendSelection> MakeVertexBackend(const Config& config,
                                           std::vector<imaging::ModelCapabilities> table,
                                           metrics::Metrics* metrics, TimerThread* timers) {
  gemini::GeminiClientOptions options =
      CommonClientOptions(config, std::move(table), metrics, timers);
  gemini::VertexTarget target;
  target.project = config.vertex_project;
  target.location = config.vertex_location;
  target.express = config.vertex_project.empty() && !config.vertex_api_key.empty();
  options.base_url = config.vertex_base_url.empty() ? gemini::DefaultVertexBaseUrl(target.location)
                                                    : config.vertex_base_url;
  BackendSelection selection;
  if (target.express) {
    options.auth = std::make_shared<gemini::ApiKeyAuth>(config.vertex_api_key,
                                                        "express-mode API key (GOOGLE_API_KEY)");
    selection.details = "express mode (no project)";
  } else {
    RETURN_IF_ERROR(gemini::ValidateVertexTarget(target));
    ASSIGN_OR_RETURN(const gemini::AdcCredentials credentials,
                     gemini::FindCredentials(AdcEnvironmentOf(config)));
    gemini::NetworkAccess access;
    access.send = &netmod::SendHttpViaNetModule;
    access.sign = &netmod::SignRs256ViaNetModule;
    access.http.connect_timeout = options.connect_timeout;
    access.http.read_timeout = std::chrono::seconds(60);
    access.http.extra_ca_file = config.ca_file;
    access.http.timers = timers;
    access.http.ca_cert_path = gemini::SystemCaBundleIfPresent();
    access.proxies = options.proxies;
    options.auth =
        std::make_shared<gemini::TokenCache>(gemini::MakeTokenSource(credentials, access));
    selection.details = "project " + target.project + ", location " + target.location;
  }
  options.vertex = target;
  return FinishClient(std::move(options), std::move(selection));
}

}  // namespace

Result<std::vector<imaging::ModelCapabilities>> LoadModelTable(const Config& config) {
  return gemini::LoadGeminiModelTable(config.model_table_file);
}

Result<std::string> ListModelsText(const Config& config) {
  ASSIGN_OR_RETURN(const auto table, LoadModelTable(config));
  std::string retired;
  for (const auto& row : table) {
    if (row.status == imaging::ModelStatus::kRetired)
      retired += (retired.empty() ? "" : ", ") + row.id;
  }
  return "imgmcp model table: built in" +
         (config.model_table_file.empty()
              ? std::string()
              : ", with " + config.model_table_file + " merged over it") +
         "; " + std::to_string(table.size()) + " models, the default " + config.gemini_model +
         (retired.empty() ? std::string() : "; refused unless --allow-retired: " + retired) +
         "\n\n" + imaging::FormatModelTable(table);
}

Result<BackendSelection> MakeBackend(const Config& config, metrics::Metrics* metrics,
                                     TimerThread* timers) {
  // The table is checked whichever backend runs: a malformed --model-table stops start-up.
  ASSIGN_OR_RETURN(std::vector<imaging::ModelCapabilities> table, LoadModelTable(config));
  const BackendChoice choice = ResolveBackend(config);
  if (choice == BackendChoice::kGemini) {
    return MakeGeminiBackend(config, std::move(table), metrics, timers);
  }
  if (choice == BackendChoice::kVertex) {
    return MakeVertexBackend(config, std::move(table), metrics, timers);
  }
  BackendSelection selection;
  local::LocalBackendOptions options;
  options.limits.max_bytes = config.max_image_bytes;
  options.limits.max_pixels = config.max_pixels;
  selection.backend = std::make_unique<local::LocalBackend>(options);
  if (config.backend == BackendChoice::kAuto) {
    selection.note = "offline local backend: GEMINI_API_KEY is not set";
  }
  return selection;
}

session::StoreOptions MakeStoreOptions(const Config& config) {
  session::StoreOptions options;
  options.data_dir = config.data_dir;
  options.max_versions_per_session = config.max_versions;
  options.idle_days = config.idle_days;
  options.cache_bytes = static_cast<size_t>(config.cache_mb) << 20;
  return options;
}

Result<std::unique_ptr<session::DeferredSessionStore>> OpenStore(const Config& config,
                                                                 const Clock& clock,
                                                                 metrics::Metrics* metrics,
                                                                 StoreOpened opened) {
  session::StoreOptions options = MakeStoreOptions(config);
  options.metrics = metrics;
  const bool postgres = session::postgres::IsPostgresUrl(config.store);
  // What can be checked at once, before anything is answered.
  if (postgres) {
    RETURN_IF_ERROR(session::postgres::DescribeConninfo(config.store));
    RETURN_IF_ERROR(session::EnsureDir(options.data_dir));
    // What no retry heals (authentication, a bad option) stops start-up; an unreachable server
    // is waited for by the store's open, which retries.
    if (Status reached = session::postgres::ProbePostgres(config.store); !reached.ok()) {
      if (reached.error().code != ErrorCode::kUnavailable) return reached.error();
      log::Warn("main", reached.error().message + "; the session store opens once it is reachable");
    }
  } else {
    RETURN_IF_ERROR(session::CheckDataDirUsable(options.data_dir));
  }
  session::postgres::PostgresStoreOptions pg;
  pg.url = config.store;
  pg.pool_size = config.store_pool;
  const std::filesystem::path gate = config.test_store_open_gate;
  return std::make_unique<session::DeferredSessionStore>(
      [options, postgres, pg, gate, &clock,
       opened = std::move(opened)]() -> Result<std::unique_ptr<session::SessionStore>> {
        RETURN_IF_ERROR(RunStoreOpenTestHooks(gate));
        std::unique_ptr<session::SessionStore> store;
        if (postgres) {
          ASSIGN_OR_RETURN(store,
                           session::postgres::PostgresSessionStore::Open(options, pg, clock));
        } else {
          ASSIGN_OR_RETURN(store, session::sqlite::OpenSessionStore(options, clock));
        }
        if (opened) opened(*store);
        return store;
      },
      session::DeferredSessionStore::OpenStart::kWhenNeeded);  // WiredServer::StartBackgroundWork
}

std::string StoreName(const Config& config) {
  if (!session::postgres::IsPostgresUrl(config.store)) return "sqlite";
  auto label = session::postgres::DescribeConninfo(config.store);
  return "PostgreSQL at " + (label.ok() ? *label : std::string("(unparsable URL)"));
}

std::string DescribeStore(const Config& config) {
  if (!session::postgres::IsPostgresUrl(config.store)) {
    return "data dir " + config.data_dir.string();
  }
  return StoreName(config) + ", local copies in " + config.data_dir.string();
}

tools::ImageInputOptions MakeImageInputOptions(const Config& config) {
  tools::ImageInputOptions options;
  std::error_code ec;
  options.allowed_roots.push_back(std::filesystem::current_path(ec));
  options.allowed_roots.push_back(config.data_dir);
  for (const auto& dir : config.allow_read) options.allowed_roots.push_back(dir);
  options.limits.max_bytes = config.max_image_bytes;
  options.limits.max_pixels = config.max_pixels;
  return options;
}

tools::ImageToolsOptions MakeImageToolsOptions(const Config& config, std::string backend_note) {
  tools::ImageToolsOptions options;
  options.preview.max_edge = config.preview_max_edge;
  options.preview.max_bytes = static_cast<size_t>(config.preview_max_bytes);
  options.limits.max_bytes = config.max_image_bytes;
  options.limits.max_pixels = config.max_pixels;
  options.backend_note = std::move(backend_note);
  options.backend_deadline = std::chrono::seconds(config.gemini_timeout_seconds + 30);
  options.max_concurrent_backend_calls = config.max_backend_calls;
  options.max_inflight_bytes = static_cast<size_t>(config.max_inflight_mb) << 20;
  options.budgets = {.per_day_usd = config.budget_usd_per_day,
                     .per_session_usd = config.budget_usd_per_session,
                     .per_principal_day_usd = config.budget_usd_per_user_day};
  options.chain_turns = config.chain_turns;
  options.max_versions = config.max_versions;  // the store's (MakeStoreOptions), told to agents
  options.idle_days = config.idle_days;
  options.save = MakeSaveOptions(config);
  return options;
}

tools::SaveOptions MakeSaveOptions(const Config& config) {
  tools::SaveOptions options;
  std::error_code ec;
  options.working_dir = std::filesystem::current_path(ec);
  // A server started in / (as some clients start them) would otherwise let save_to write
  // anywhere outside the data dir.
  if (!ec && options.working_dir != "/") options.roots.push_back(options.working_dir);
  for (const auto& dir : config.allow_write) options.roots.push_back(dir);
  options.data_dir = config.data_dir;
  options.limits.max_bytes = config.max_image_bytes;
  options.limits.max_pixels = config.max_pixels;
  options.pause = SaveGates(config.test_save_gates);
  if (config.test_save_disk_full) {
    log::Warn("main", "IMGMCP_TEST_SAVE_DISK_FULL: every save_to copy fails as on a full disk");
    options.fail_writes_with = ENOSPC;
  }
  return options;
}

http::HttpOptions MakeHttpOptions(const Config& config) {
  http::HttpOptions options;
  options.host = config.http_listen->host;
  options.port = config.http_listen->port;
  options.auth_token = config.auth_token;
  if (!config.oauth_issuers.empty()) options.oauth = MakeOAuthOptions(config);
  // An image upload is base64 inside JSON: 4/3 of the largest image, plus the envelope.
  options.max_body_bytes =
      std::max<size_t>(options.max_body_bytes, config.max_image_bytes / 3 * 4 + (1 << 20));
  options.header_timeout = std::chrono::seconds(config.http_header_timeout_seconds);
  options.max_sessions = static_cast<size_t>(config.http_max_sessions);
  for (const std::string& host : config.allow_hosts) {  // IPv6 addresses in brackets, as in Host
    const bool bare_ipv6 = host.find(':') != std::string::npos && host.front() != '[';
    options.extra_allowed_hosts.push_back(bare_ipv6 ? "[" + host + "]" : host);
  }
  if (http::IsWildcardHost(options.host)) {
    // Bound to every interface: the machine's own addresses are how clients reach it. An IP
    // literal in Host cannot come from DNS rebinding, which needs a name.
    for (auto& address : http::LocalInterfaceAddresses()) {
      options.extra_allowed_hosts.push_back(std::move(address));
    }
  }
  return options;
}

bool MetricsWanted(const Config& config) {
  return !config.metrics_off && (config.http_listen || config.metrics_listen);
}

http::HttpOptions MakeMetricsHttpOptions(const Config& config) {
  Config as_http = config;
  as_http.http_listen = config.metrics_listen;
  http::HttpOptions options = MakeHttpOptions(as_http);
  options.metrics_only = true;
  options.oauth.reset();        // a scraper has no access token; this listener serves no data
  options.max_connections = 4;  // scrapes are short; a few at once is plenty
  options.max_pending_connections = 64;
  return options;
}

Result<std::unique_ptr<http::HttpListener>> StartMetricsListener(const Config& config,
                                                                 mcp::McpServer& server,
                                                                 metrics::Metrics* metrics) {
  http::HttpOptions options = MakeMetricsHttpOptions(config);
  options.metrics = metrics;
  auto net_module = netmod::LoadNetModule();
  if (!net_module.ok()) return WithContext(net_module.error(), "--metrics");
  std::unique_ptr<http::HttpListener> listener = (*net_module)->new_http_listener(server, options);
  auto port = listener->Start();
  if (!port.ok()) return WithContext(port.error(), "--metrics");
  std::string url = http::EndpointUrl(options.host, *port);  // http://HOST:PORT/mcp
  url.replace(url.rfind('/'), std::string::npos, "/metrics");
  log::Info("main", "metrics at " + url);
  return listener;
}

std::vector<std::string> ConfigWarnings(const Config& config) {
  std::vector<std::string> warnings;
  if (config.store_on_command_line && session::postgres::ConninfoHasPassword(config.store)) {
    warnings.push_back(
        "--store carries a password, which any local user can read in this process's command "
        "line (/proc/PID/cmdline); give the URL in IMGMCP_STORE instead, or keep the password "
        "in ~/.pgpass, PGPASSFILE or a service file (passfile=, service=)");
  }
  for (const auto& dir : config.allow_read) {
    if (std::string w =
            DirectoryWarning("--allow-read", dir, "nothing is allowed from it until it exists",
                             "images are allowed only from directories");
        !w.empty()) {
      warnings.push_back(std::move(w));
    }
  }
  AddWriteWarnings(config, warnings);
  if (config.http_listen && !http::IsLoopbackHost(config.http_listen->host) &&
      config.auth_token.empty() && config.oauth_issuers.empty()) {
    warnings.push_back("--http " + config.http_listen->host +
                       " is reachable from other machines and no --auth-token "
                       "(IMGMCP_AUTH_TOKEN) is set: anyone who can connect can use every tool. "
                       "Set a token, and put a TLS proxy in front.");
  }
  if (config.metrics_listen && !http::IsLoopbackHost(config.metrics_listen->host) &&
      config.auth_token.empty()) {
    warnings.push_back("--metrics " + config.metrics_listen->host +
                       " is reachable from other machines and no --auth-token "
                       "(IMGMCP_AUTH_TOKEN) is set: anyone who can connect can read the metrics.");
  }
  return warnings;
}

}  // namespace imgmcp::app
