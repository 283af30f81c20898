#include "server/app/config.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <type_traits>
#include <utility>

#include "common/ascii.h"
#include "common/decimal.h"
#include "common/log.h"
#include "gemini_client/models.h"
#include "imaging/generation_params.h"
#include "server/oauth/oauth_urls.h"

namespace imgmcp::app {
namespace {

Error FlagError(std::string_view source, const std::string& message) {
  return Error(ErrorCode::kInvalidArgument,
               std::string(source) + ": " + message + " (see imgmcp --help)");
}

Result<int64_t> ParseInt(std::string_view source, const std::string& text, int64_t min,
                         int64_t max) {
  const std::optional<int64_t> v = ParseDecimal<int64_t>(text, min, max);
  if (!v) {
    return FlagError(source, "expected an integer from " + std::to_string(min) + " to " +
                                 std::to_string(max) + ", got \"" + text + "\"");
  }
  return *v;
}

// "a, b,,c" → {"a", "b", "c"} (with `separator` ','): items trimmed of blanks, empty ones skipped.
std::vector<std::string> SplitList(std::string_view text, char separator) {
  std::vector<std::string> items;
  for (size_t start = 0; start <= text.size();) {
    size_t comma = std::min(text.find(separator, start), text.size());
    const std::string_view item = TrimSpacesAndTabs(text.substr(start, comma - start));
    if (!item.empty()) items.emplace_back(item);
    start = comma + 1;
  }
  return items;
}

// --- How a flag sets its field ----------------------------------------------------------------
// `source` is the flag as written or the environment variable the value came from.

using Setter = Status (*)(Config& config, std::string_view source, const std::string& value);
// The default --help shows, read from a default Config (or said in words).
using DefaultText = std::string (*)(const Config& defaults);

// Milliseconds as seconds: "10", "0.5".
std::string FormatSeconds(int64_t ms) {
  std::string text = std::to_string(ms / 1000);
  if (ms % 1000 != 0) {
    std::string fraction = std::to_string(1000 + ms % 1000).substr(1);
    while (fraction.back() == '0') fraction.pop_back();
    text += "." + fraction;
  }
  return text;
}

template <auto kField>
Status SetText(Config& c, std::string_view, const std::string& value) {
  c.*kField = value;
  return Status::Ok();
}

template <auto kField>
Status SetTrue(Config& c, std::string_view, const std::string&) {
  c.*kField = true;
  return Status::Ok();
}

template <auto kField, int64_t kMin, int64_t kMax>
Status SetInt(Config& c, std::string_view source, const std::string& value) {
  ASSIGN_OR_RETURN(int64_t v, ParseInt(source, value, kMin, kMax));
  c.*kField = static_cast<std::remove_reference_t<decltype(c.*kField)>>(v);
  return Status::Ok();
}

// Calls per minute: "N/min" or "N", 0 = no limit.
template <auto kField>
Status SetPerMinute(Config& c, std::string_view source, const std::string& value) {
  std::string number = value;
  if (number.ends_with("/min")) number.resize(number.size() - 4);
  Result<int64_t> v = ParseInt(source, number, 0, 1'000'000);
  if (!v.ok()) {
    return FlagError(
        source,
        "expected calls per minute as N/min (0 = no limit), e.g. 30/min, got \"" + value + "\"");
  }
  c.*kField = static_cast<int>(*v);
  return Status::Ok();
}

// An amount of US dollars: a decimal number from 0 (none) to a million.
template <auto kField>
Status SetUsd(Config& c, std::string_view source, const std::string& value) {
  constexpr double kMostUsd = 1e6;
  char* end = nullptr;
  const double v = value.empty() ? -1 : std::strtod(value.c_str(), &end);
  if (end == nullptr || *end != '\0' || !(v >= 0 && v <= kMostUsd)) {
    return FlagError(source,
                     "expected an amount of US dollars from 0 (no budget) to 1000000, "
                     "e.g. 5 or 0.25, got \"" +
                         value + "\"");
  }
  c.*kField = v;
  return Status::Ok();
}

// A duration in seconds, decimals allowed ("0.5"), kept in milliseconds within [kMinMs, kMaxMs].
template <auto kField, int64_t kMinMs, int64_t kMaxMs>
Status SetSeconds(Config& c, std::string_view source, const std::string& value) {
  char* end = nullptr;
  const double seconds = value.empty() ? -1 : std::strtod(value.c_str(), &end);
  const double ms = seconds * 1000;
  if (end == nullptr || *end != '\0' || !(ms >= kMinMs && ms <= kMaxMs)) {
    return FlagError(source, "expected seconds from " + FormatSeconds(kMinMs) + " to " +
                                 FormatSeconds(kMaxMs) + ", e.g. 10 or 0.5, got \"" + value + "\"");
  }
  c.*kField = std::llround(ms);
  return Status::Ok();
}

template <auto kField>
std::string ShowSeconds(const Config& defaults) {
  return FormatSeconds(defaults.*kField);
}

template <auto kField>
std::string ShowDefault(const Config& defaults) {
  if constexpr (std::is_same_v<std::remove_cvref_t<decltype(defaults.*kField)>, std::string>) {
    return defaults.*kField;
  } else {
    return std::to_string(defaults.*kField);
  }
}

Status SetDataDir(Config& c, std::string_view source, const std::string& value) {
  if (value.empty()) return FlagError(source, "must not be empty");
  c.data_dir = value;
  return Status::Ok();
}

constexpr std::pair<std::string_view, BackendChoice> kBackendNames[] = {
    {"auto", BackendChoice::kAuto},
    {"gemini", BackendChoice::kGemini},
    {"vertex", BackendChoice::kVertex},
    {"local", BackendChoice::kLocal}};

Status SetBackend(Config& c, std::string_view source, const std::string& value) {
  for (const auto& [name, choice] : kBackendNames) {
    if (value == name) {
      c.backend = choice;
      return Status::Ok();
    }
  }
  return FlagError(source, "expected auto, gemini, vertex or local, got \"" + value + "\"");
}

std::string BackendDefault(const Config& defaults) {
  for (const auto& [name, choice] : kBackendNames) {
    if (choice == defaults.backend) return std::string(name);
  }
  return "";
}

Status SetModels(Config& c, std::string_view source, const std::string& value) {
  c.gemini_models = gemini::SplitModelList(value);
  if (c.gemini_models.empty())
    return FlagError(source, "needs a comma-separated list of model ids");
  return Status::Ok();
}

Status AddOAuthIssuer(Config& c, std::string_view source, const std::string& value) {
  auto url = oauth::ParseOAuthUrl(value, source);
  if (!url.ok()) return url.error();
  c.oauth_issuers.push_back(value);
  return Status::Ok();
}

Status SetOAuthResource(Config& c, std::string_view source, const std::string& value) {
  auto url = oauth::ParseOAuthUrl(value, source);
  if (!url.ok()) return url.error();
  c.oauth_resource = value;
  return Status::Ok();
}

Status SetOAuthIntrospectionUrl(Config& c, std::string_view source, const std::string& value) {
  auto url = oauth::ParseOAuthUrl(value, source);
  if (!url.ok()) return url.error();
  c.oauth_introspection_url = value;
  return Status::Ok();
}

// RFC 6749 §3.3 scope tokens: printable ASCII without spaces, quotes or backslashes.
bool IsScopeToken(std::string_view scope) {
  return !scope.empty() && std::all_of(scope.begin(), scope.end(), [](char ch) {
    return ch > 0x20 && ch < 0x7f && ch != '"' && ch != '\\';
  });
}

Status SetOAuthScopes(Config& c, std::string_view source, const std::string& value) {
  const size_t comma = value.find(',');
  const std::string read = value.substr(0, comma);
  const std::string write = comma == std::string::npos ? "" : value.substr(comma + 1);
  if (!IsScopeToken(read) || !IsScopeToken(write) || read == write) {
    return FlagError(source,
                     "expected two different scope names READ,WRITE (no spaces, quotes "
                     "or backslashes), got \"" +
                         value + "\"");
  }
  c.oauth_read_scope = read;
  c.oauth_write_scope = write;
  return Status::Ok();
}

Status AddAllowRead(Config& c, std::string_view, const std::string& value) {
  c.allow_read.emplace_back(value);
  return Status::Ok();
}

Status AddAllowWrite(Config& c, std::string_view source, const std::string& value) {
  if (value.empty()) return FlagError(source, "needs a directory");
  c.allow_write.emplace_back(value);
  return Status::Ok();
}

Status SetSelfCheckToken(Config& c, std::string_view, const std::string&) {
  c.self_check = true;
  c.self_check_token = true;
  return Status::Ok();
}

Status SetStore(Config& c, std::string_view source, const std::string& value) {
  if (value != "sqlite" && value.rfind("postgresql://", 0) != 0 &&
      value.rfind("postgres://", 0) != 0) {
    // The value is not repeated: it may be a URL with a password in it.
    return FlagError(source, "expected sqlite or a postgresql:// URL");
  }
  c.store = value;
  c.store_on_command_line = source.rfind("--", 0) == 0;
  return Status::Ok();
}

Status SetHttp(Config& c, std::string_view source, const std::string& value) {
  auto address = http::ParseListenAddress(value);
  if (!address.ok()) return FlagError(source, address.error().message);
  c.http_listen = *address;
  return Status::Ok();
}

Status SetMetrics(Config& c, std::string_view source, const std::string& value) {
  c.metrics_off = value == "off";
  c.metrics_listen.reset();
  if (c.metrics_off) return Status::Ok();
  auto address = http::ParseListenAddress(value);
  if (!address.ok()) return FlagError(source, address.error().message);
  c.metrics_listen = *address;
  return Status::Ok();
}

Status AddAllowHost(Config& c, std::string_view source, const std::string& value) {
  if (value.empty() || value.find_first_of(" /\t") != std::string::npos) {
    return FlagError(source,
                     "expected a host name or address (e.g. myhost.lan, 192.168.1.5 or [fd00::5]), "
                     "got \"" +
                         value + "\"");
  }
  c.allow_hosts.push_back(value);
  return Status::Ok();
}

Status SetLogLevel(Config& c, std::string_view source, const std::string& value) {
  log::Level level;
  if (!log::ParseLevel(value, &level)) {
    return FlagError(source, "expected debug, info, warning, error or off");
  }
  c.log_level = value;
  return Status::Ok();
}

Status SetLogFormat(Config& c, std::string_view source, const std::string& value) {
  log::Format format;
  if (!log::ParseFormat(value, &format)) return FlagError(source, "expected text or json");
  c.log_format = value;
  return Status::Ok();
}

std::string DataDirDefault(const Config&) {
  return "$XDG_DATA_HOME/imgmcp, else $HOME/.local/share/imgmcp";
}

std::string ModelsDefault(const Config&) {
  return "every model of the model table that is not retired, as --list-models shows";
}

Status SetModelTable(Config& c, std::string_view source, const std::string& value) {
  if (value.empty()) return FlagError(source, "needs a JSON file");
  c.model_table_file = value;
  return Status::Ok();
}

// --- The table --------------------------------------------------------------------------------

struct FlagSpec {
  std::string_view heading = {};  // only in a row of its own: starts a section of --help
  std::string_view name = {};     // "--model"; "" for an environment variable without a flag
  std::string_view alias = {};    // another name for the flag, or ""
  std::string_view env = {};      // its environment variable, or ""
  std::string_view value = {};    // what the flag takes, e.g. "ID"; "" for a switch
  std::string_view help = {};     // one paragraph, wrapped by HelpText; "" keeps it out of --help
  Setter set = nullptr;
  DefaultText default_text = nullptr;  // null: no default worth showing
  bool repeatable = false;  // each use adds to a list; its variable adds to the same list
  // The variable holds a list of values separated by this character (',' or ':'), each set like
  // a flag; 0 for one value.
  char env_list = 0;
};

// Every flag and environment variable imgmcp reads, in --help order. The environment is read
// first; a flag given on the command line then wins (ParseConfig).
constexpr FlagSpec kFlags[] = {
    {.heading = "Sessions and storage"},
    {.name = "--data-dir",
     .env = "IMGMCP_DATA_DIR",
     .value = "DIR",
     .help = "where sessions live",
     .set = SetDataDir,
     .default_text = DataDirDefault},
    {.name = "--store",
     .env = "IMGMCP_STORE",
     .value = "sqlite|postgresql://USER[:PASSWORD]@HOST[:PORT]/DB[?...]",
     .help = "where versions are kept: sqlite in the data dir, or one PostgreSQL database shared "
             "by every replica, the data dir holding this replica's local copies",
     .set = SetStore,
     .default_text = ShowDefault<&Config::store>},
    {.name = "--store-pool",
     .env = "IMGMCP_STORE_POOL",
     .value = "N",
     .help = "PostgreSQL connections at most, per replica",
     .set = SetInt<&Config::store_pool, 1, 1000>,
     .default_text = ShowDefault<&Config::store_pool>},
    {.name = "--max-versions",
     .value = "N",
     .help = "versions kept per session, 0 = all",
     .set = SetInt<&Config::max_versions, 0, 1'000'000>,
     .default_text = ShowDefault<&Config::max_versions>},
    {.name = "--idle-days",
     .value = "N",
     .help = "expire sessions idle this long, 0 = never",
     .set = SetInt<&Config::idle_days, 0, 100'000>,
     .default_text = ShowDefault<&Config::idle_days>},
    {.name = "--cache-mb",
     .value = "N",
     .help = "in-memory cache of recent images",
     .set = SetInt<&Config::cache_mb, 0, 1 << 20>,
     .default_text = ShowDefault<&Config::cache_mb>},

    {.heading = "Backend"},
    {.name = "--backend",
     .env = "IMGMCP_BACKEND",
     .value = "auto|gemini|vertex|local",
     .help = "auto: gemini when GEMINI_API_KEY is set, else vertex when GOOGLE_CLOUD_PROJECT is "
             "set and credentials are found, else the offline local engine",
     .set = SetBackend,
     .default_text = BackendDefault},
    {.env = "GEMINI_API_KEY",
     .help = "the Gemini API key, sent only to the Gemini endpoint; never logged or stored",
     .set = SetText<&Config::gemini_api_key>},
    {.name = "--model",
     .alias = "--gemini-model",
     .env = "IMGMCP_GEMINI_MODEL",
     .value = "ID",
     .help = "the default Gemini model",
     .set = SetText<&Config::gemini_model>,
     .default_text = ShowDefault<&Config::gemini_model>},
    {.name = "--models",
     .env = "IMGMCP_MODELS",
     .value = "ID,ID,...",
     .help = "the Gemini models callers may choose with `model`; the default model must be among "
             "them",
     .set = SetModels,
     .default_text = ModelsDefault},
    {.name = "--model-table",
     .env = "IMGMCP_MODEL_TABLE",
     .value = "FILE",
     .help = "a JSON model table merged over the built-in one: a row with a new id adds a model, "
             "a row with a known id corrects that row (docs/generation.md, \"The model "
             "table\"); a malformed file stops start-up, naming the row and the key",
     .set = SetModelTable},
    {.name = "--allow-retired",
     .help = "offer and call the models the table marks retired, for an endpoint that still "
             "serves them; without it a call naming one is refused before any request, naming "
             "its replacement",
     .set = SetTrue<&Config::allow_retired>},
    {.name = "--chain-turns",
     .value = "N",
     .help = "earlier turns an edit with context \"chain\" replays, 1-14 (no model takes more "
             "than 14 images in one request)",
     .set = SetInt<&Config::chain_turns, 1, imaging::kMostInputImages>,
     .default_text = ShowDefault<&Config::chain_turns>},
    {.name = "--gemini-base-url",
     .env = "GEMINI_BASE_URL",
     .value = "URL",
     .help = "where Gemini calls go",
     .set = SetText<&Config::gemini_base_url>,
     .default_text = ShowDefault<&Config::gemini_base_url>},
    {.name = "--vertex-project",
     .env = "GOOGLE_CLOUD_PROJECT",
     .value = "ID",
     .help = "the Google Cloud project Vertex AI calls bill to",
     .set = SetText<&Config::vertex_project>},
    {.name = "--vertex-location",
     .env = "GOOGLE_CLOUD_LOCATION",
     .value = "LOCATION",
     .help = "the Vertex AI location: global (aiplatform.googleapis.com; the only one serving "
             "the 3.x image models) or a region such as us-central1",
     .set = SetText<&Config::vertex_location>,
     .default_text = ShowDefault<&Config::vertex_location>},
    {.name = "--vertex-base-url",
     .env = "IMGMCP_VERTEX_BASE_URL",
     .value = "URL",
     .help = "where Vertex AI calls go (default: by location)",
     .set = SetText<&Config::vertex_base_url>},
    {.env = "GOOGLE_APPLICATION_CREDENTIALS",
     .help = "Vertex AI: a service_account or authorized_user JSON file; else gcloud's "
             "application-default file, else the metadata server ($GCE_METADATA_HOST)",
     .set = SetText<&Config::google_application_credentials>},
    {.env = "GOOGLE_API_KEY",
     .help = "Vertex AI express mode: an API key used instead of credentials when no project is "
             "set; never logged",
     .set = SetText<&Config::vertex_api_key>},
    {.env = "CLOUDSDK_CONFIG", .set = SetText<&Config::cloudsdk_config>},
    {.env = "HOME", .set = SetText<&Config::home>},
    {.env = "GCE_METADATA_HOST", .set = SetText<&Config::gce_metadata_host>},
    {.env = "HTTPS_PROXY",
     .help = "proxy for https calls (CONNECT), http://[user:password@]host[:port]; also "
             "$https_proxy, $HTTP_PROXY for http calls, $NO_PROXY for exceptions",
     .set = SetText<&Config::https_proxy>},
    {.env = "https_proxy", .set = SetText<&Config::https_proxy>},
    {.env = "HTTP_PROXY", .set = SetText<&Config::http_proxy>},
    {.env = "http_proxy", .set = SetText<&Config::http_proxy>},
    {.env = "NO_PROXY", .set = SetText<&Config::no_proxy>},
    {.env = "no_proxy", .set = SetText<&Config::no_proxy>},
    {.name = "--ca-file",
     .env = "SSL_CERT_FILE",
     .value = "FILE",
     .help = "a PEM CA bundle trusted besides the system's, for every outgoing https call",
     .set = SetText<&Config::ca_file>},
    {.name = "--gemini-timeout",
     .value = "SECONDS",
     .help = "overall limit of one Gemini call, retries included",
     .set = SetInt<&Config::gemini_timeout_seconds, 1, 3600>,
     .default_text = ShowDefault<&Config::gemini_timeout_seconds>},
    {.name = "--max-backend-calls",
     .value = "N",
     .help = "concurrent backend calls across sessions",
     .set = SetInt<&Config::max_backend_calls, 1, 1024>,
     .default_text = ShowDefault<&Config::max_backend_calls>},
    {.name = "--max-inflight-mb",
     .env = "IMGMCP_MAX_INFLIGHT_MB",
     .value = "MB",
     .help = "memory the image calls in flight may hold together (the images they read, the "
             "pixels they decode and make, their requests and answers); a call that does not "
             "fit is refused, 0 = no limit",
     .set = SetInt<&Config::max_inflight_mb, 0, 1 << 20>,
     .default_text = ShowDefault<&Config::max_inflight_mb>},
    {.name = "--budget-usd-per-day",
     .env = "IMGMCP_BUDGET_USD_PER_DAY",
     .value = "USD",
     .help = "what every call together may cost in one UTC day (summed across the replicas of "
             "one store); a call whose worst-case estimate would cross it is refused before any "
             "request, 0 = no budget",
     .set = SetUsd<&Config::budget_usd_per_day>},
    {.name = "--budget-usd-per-session",
     .env = "IMGMCP_BUDGET_USD_PER_SESSION",
     .value = "USD",
     .help = "what the calls of one session may cost in all; refused as above, 0 = no budget",
     .set = SetUsd<&Config::budget_usd_per_session>},
    {.name = "--budget-usd-per-user-day",
     .env = "IMGMCP_BUDGET_USD_PER_USER_DAY",
     .value = "USD",
     .help = "what the calls of one person may cost in one UTC day (each OAuth principal; "
             "without OAuth the one local user); refused as above, 0 = no budget",
     .set = SetUsd<&Config::budget_usd_per_user_day>},
    {.name = "--rate-limit-per-user",
     .env = "IMGMCP_RATE_LIMIT_PER_USER",
     .value = "N/min",
     .help = "tool calls one person may start in one minute, counted across the replicas of one "
             "store; beyond it a call is refused (HTTP 429 with Retry-After), 0 = no limit",
     .set = SetPerMinute<&Config::rate_limit_per_user>},
    {.name = "--max-calls-per-user",
     .env = "IMGMCP_MAX_CALLS_PER_USER",
     .value = "N",
     .help = "tool calls of one person in flight in this process at once; beyond it a call is "
             "refused (HTTP 429 with Retry-After), 0 = no limit",
     .set = SetInt<&Config::max_calls_per_user, 0, 100000>},
    {.name = "--audit-days",
     .env = "IMGMCP_AUDIT_DAYS",
     .value = "DAYS",
     .help = "keep the audit trail (every write and every refused token, in the store; read it "
             "with `imgmcp audit`) this long; 0 = keep none",
     .set = SetInt<&Config::audit_days, 0, 36500>,
     .default_text = ShowDefault<&Config::audit_days>},
    {.name = "--gallery-link-ttl",
     .env = "IMGMCP_GALLERY_LINK_TTL",
     .value = "SECONDS",
     .help =
         "with OAuth, how long the gallery link get_image returns opens its session (read-only, "
         "that session alone) without an access token",
     .set = SetInt<&Config::gallery_link_ttl_seconds, 1, 31 * 86400>,
     .default_text = ShowDefault<&Config::gallery_link_ttl_seconds>},

    {.heading = "Images"},
    {.name = "--allow-read",
     .value = "DIR",
     .help = "allow image {path} inputs from DIR; the working directory and the data dir are "
             "always allowed",
     .set = AddAllowRead,
     .repeatable = true},
    {.name = "--allow-write",
     .env = "IMGMCP_ALLOW_WRITE",
     .value = "DIR",
     .help = "let save_to write copies below DIR too; the working directory is always allowed "
             "(unless it is /), the data dir never",
     .set = AddAllowWrite,
     .repeatable = true,
     .env_list = ':'},
    {.name = "--preview-max-edge",
     .value = "PX",
     .help = "long edge of inline previews",
     .set = SetInt<&Config::preview_max_edge, 16, 8192>,
     .default_text = ShowDefault<&Config::preview_max_edge>},
    {.name = "--preview-max-bytes",
     .value = "N",
     .help = "byte budget of inline previews",
     .set = SetInt<&Config::preview_max_bytes, 4096, 64LL << 20>,
     .default_text = ShowDefault<&Config::preview_max_bytes>},
    {.name = "--max-image-bytes",
     .value = "N",
     .help = "largest accepted image file or upload",
     .set = SetInt<&Config::max_image_bytes, 1024, 1LL << 30>,
     .default_text = ShowDefault<&Config::max_image_bytes>},
    {.name = "--max-pixels",
     .value = "N",
     .help = "largest accepted width*height",
     .set = SetInt<&Config::max_pixels, 1, 1LL << 31>,
     .default_text = ShowDefault<&Config::max_pixels>},

    {.heading = "HTTP"},
    {.name = "--http",
     .value = "[HOST:]PORT",
     .help = "serve Streamable HTTP on /mcp instead of stdio (default host 127.0.0.1)",
     .set = SetHttp},
    {.name = "--auth-token",
     .env = "IMGMCP_AUTH_TOKEN",
     .value = "TOKEN",
     .help = "require \"Authorization: Bearer TOKEN\" over HTTP",
     .set = SetText<&Config::auth_token>},
    {.name = "--oauth-issuer",
     .env = "IMGMCP_OAUTH_ISSUERS",
     .value = "URL",
     .help = "serve as an OAuth 2.1 resource server: accept the JWT access tokens of this "
             "authorization server (https, or http on loopback), its keys found through its "
             "metadata; each person's HTTP sessions and tasks are their own",
     .set = AddOAuthIssuer,
     .repeatable = true,
     .env_list = ','},
    {.name = "--oauth-resource",
     .env = "IMGMCP_OAUTH_RESOURCE",
     .value = "URL",
     .help = "this server's resource URI, the audience its access tokens must name: the public "
             "URL of /mcp (default: http://HOST:PORT/mcp of --http)",
     .set = SetOAuthResource},
    {.name = "--oauth-introspection-url",
     .env = "IMGMCP_OAUTH_INTROSPECTION_URL",
     .value = "URL",
     .help = "accept opaque (non-JWT) access tokens too, asking this RFC 7662 endpoint about each "
             "(answers reused up to 60 s) with --oauth-client-id and $IMGMCP_OAUTH_CLIENT_SECRET",
     .set = SetOAuthIntrospectionUrl},
    {.name = "--oauth-client-id",
     .env = "IMGMCP_OAUTH_CLIENT_ID",
     .value = "ID",
     .help = "imgmcp's client id at the authorization server, for token introspection",
     .set = SetText<&Config::oauth_client_id>},
    {.env = "IMGMCP_OAUTH_CLIENT_SECRET",
     .help = "the client secret of --oauth-client-id; read from the environment only, never logged",
     .set = SetText<&Config::oauth_client_secret>},
    {.name = "--oauth-scopes",
     .value = "READ,WRITE",
     .help = "the scope names that allow reading (get_image, resources, listings) and writing "
             "(generate, edit, reset, save_to, cancelling tasks)",
     .set = SetOAuthScopes,
     .default_text =
         [](const Config& d) { return d.oauth_read_scope + "," + d.oauth_write_scope; }},
    {.name = "--allow-host",
     .env = "IMGMCP_ALLOW_HOSTS",
     .value = "NAME",
     .help = "also accept NAME (a host name or address) in HTTP Host/Origin headers; loopback "
             "names and an explicit bind address are always accepted",
     .set = AddAllowHost,
     .repeatable = true,
     .env_list = ','},
    {.name = "--http-header-timeout",
     .value = "S",
     .help = "a request head must arrive whole within S seconds",
     .set = SetInt<&Config::http_header_timeout_seconds, 1, 3600>,
     .default_text = ShowDefault<&Config::http_header_timeout_seconds>},
    {.name = "--http-max-sessions",
     .value = "N",
     .help = "HTTP sessions at once; when full, the longest idle one is ended",
     .set = SetInt<&Config::http_max_sessions, 1, 1'000'000>,
     .default_text = ShowDefault<&Config::http_max_sessions>},
    {.name = "--metrics",
     .env = "IMGMCP_METRICS",
     .value = "[HOST:]PORT",
     .help = "serve Prometheus metrics at GET /metrics on a listener of their own (also in stdio "
             "mode; default host 127.0.0.1), with the same Host and token checks as /mcp; --http "
             "serves /metrics too; \"off\": count nothing and serve no /metrics",
     .set = SetMetrics},
    {.name = "--drain-timeout",
     .env = "IMGMCP_DRAIN_TIMEOUT",
     .value = "SECONDS",
     .help = "on SIGTERM or SIGINT, calls in flight may finish for up to SECONDS; the rest are "
             "then cancelled (committing nothing) and the server exits 0 (over HTTP /readyz "
             "turns 503 first, and requests are served until none came for 2 s). 0 = cancel at "
             "once",
     .set = SetInt<&Config::drain_timeout_seconds, 0, 3600>,
     .default_text = ShowDefault<&Config::drain_timeout_seconds>},
    {.name = "--task-ttl",
     .env = "IMGMCP_TASK_TTL",
     .value = "SECONDS",
     .help = "a finished task (MCP tasks extension: generate_image and edit_image for clients "
             "that declare it) stays readable with tasks/get this long, then its row is removed; "
             "the version it committed stays",
     .set = SetInt<&Config::task_ttl_seconds, 1, 30 * 24 * 3600>,
     .default_text = ShowDefault<&Config::task_ttl_seconds>},
    {.name = "--max-tasks-per-owner",
     .env = "IMGMCP_MAX_TASKS_PER_OWNER",
     .value = "N",
     .help = "tasks of one caller (the same credentials) not yet finished in this process; "
             "beyond it a new task is refused at once with an error naming the limit. 0 = no "
             "limit",
     .set = SetInt<&Config::max_tasks_per_owner, 0, 100000>,
     .default_text = ShowDefault<&Config::max_tasks_per_owner>},
    {.name = "--batch-window",
     .env = "IMGMCP_BATCH_WINDOW",
     .value = "SECONDS",
     .help = "generate_image with delivery \"batch\": calls of one model that come within this "
             "window go into one Gemini batch job (half price; the image arrives as the task's "
             "result when the job ends)",
     .set = SetSeconds<&Config::batch_window_ms, 100, 3'600'000>,
     .default_text = ShowSeconds<&Config::batch_window_ms>},
    {.name = "--batch-max",
     .env = "IMGMCP_BATCH_MAX",
     .value = "N",
     .help = "requests in one Gemini batch job at most; more calls in a window make more jobs",
     .set = SetInt<&Config::batch_max, 1, 100>,
     .default_text = ShowDefault<&Config::batch_max>},
    {.name = "--batch-poll",
     .env = "IMGMCP_BATCH_POLL",
     .value = "SECONDS",
     .help = "a batch job is first read this long after its creation, then at doubling "
             "intervals up to 10 minutes (each jittered by 10 %)",
     .set = SetSeconds<&Config::batch_poll_ms, 100, 3'600'000>,
     .default_text = ShowSeconds<&Config::batch_poll_ms>},

    {.heading = "Other"},
    {.name = "--conformance-fixtures",
     .help = "add the MCP conformance suite's test tools, resources and prompts",
     .set = SetTrue<&Config::conformance_fixtures>},
    {.name = "--log-level",
     .value = "LEVEL",
     .help = "debug, info, warning, error or off; logs go to stderr only",
     .set = SetLogLevel,
     .default_text = ShowDefault<&Config::log_level>},
    {.name = "--log-format",
     .env = "IMGMCP_LOG_FORMAT",
     .value = "FORMAT",
     .help = "text, or json: one object per line with the call's trace_id, method, tool, session "
             "and duration_ms",
     .set = SetLogFormat,
     .default_text = ShowDefault<&Config::log_format>},
    {.name = "--self-check",
     .help = "open the data dir and backend, report, and exit",
     .set = SetTrue<&Config::self_check>},
    {.name = "--self-check-token",
     .help = "--self-check, and also get one access token from the Vertex AI credentials",
     .set = SetSelfCheckToken},
    {.name = "--list-models",
     .help = "print the model table in effect (the built-in one with --model-table merged "
             "over it): each model's status, sizes, ratios, thinking levels and prices; and exit",
     .set = SetTrue<&Config::list_models>},
    {.name = "--version",
     .help = "print the version and exit",
     .set = SetTrue<&Config::show_version>},
    {.name = "--help",
     .alias = "-h",
     .help = "print this help and exit",
     .set = SetTrue<&Config::show_help>},

    // Test hooks: read from the environment only, and not in --help.
    {.env = "IMGMCP_TEST_STORE_OPEN_GATE", .set = SetText<&Config::test_store_open_gate>},
    {.env = "IMGMCP_TEST_SAVE_GATES", .set = SetText<&Config::test_save_gates>},
    {.env = "IMGMCP_TEST_SAVE_DISK_FULL", .set = SetTrue<&Config::test_save_disk_full>},
};

// --- Parsing ----------------------------------------------------------------------------------

struct GivenFlag {
  const FlagSpec* spec;
  std::string written;  // as on the command line, for errors
  std::string value;
};

const FlagSpec* FindFlag(std::string_view name) {
  for (const FlagSpec& spec : kFlags) {
    if (!spec.name.empty() && (spec.name == name || spec.alias == name)) return &spec;
  }
  return nullptr;
}

// Matches argv to the table: `--flag VALUE` or `--flag=VALUE`, switches alone. Sets nothing yet.
Result<std::vector<GivenFlag>> ReadArgs(const std::vector<std::string>& args) {
  std::vector<GivenFlag> given;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string written = args[i];
    std::optional<std::string> inline_value;
    if (const size_t eq = written.find('=');
        written.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = written.substr(eq + 1);
      written.resize(eq);
    }
    const FlagSpec* spec = FindFlag(written);
    if (spec == nullptr) return FlagError(written, "unknown flag");
    if (spec->value.empty()) {
      if (inline_value) return FlagError(written, "takes no value");
      given.push_back({spec, written, ""});
    } else if (inline_value) {
      given.push_back({spec, written, *inline_value});
    } else if (i + 1 < args.size()) {
      given.push_back({spec, written, args[++i]});
    } else {
      return FlagError(written, "needs a value");
    }
  }
  return given;
}

// Applies each variable that is set and not empty, unless its flag was given (a repeatable flag's
// variable adds to the flag's values instead).
Status ApplyEnvironment(Config& c, const std::vector<GivenFlag>& given, const EnvLookup& env) {
  for (const FlagSpec& spec : kFlags) {
    if (spec.env.empty()) continue;
    const std::optional<std::string> value = env(std::string(spec.env));
    if (!value || value->empty()) continue;
    const bool flag_given = std::any_of(given.begin(), given.end(),
                                        [&](const GivenFlag& g) { return g.spec == &spec; });
    if (flag_given && !spec.repeatable) continue;
    if (spec.env_list == 0) {
      RETURN_IF_ERROR(spec.set(c, spec.env, *value));
      continue;
    }
    for (const std::string& item : SplitList(*value, spec.env_list)) {
      RETURN_IF_ERROR(spec.set(c, spec.env, item));
    }
  }
  return Status::Ok();
}

// --- Help -------------------------------------------------------------------------------------

constexpr size_t kHelpColumn = 28;  // where descriptions start
constexpr size_t kHelpWidth = 100;

// Appends `text` word-wrapped at kHelpWidth, continuing a line that is `column` wide so far;
// further lines start at kHelpColumn.
void AppendWrapped(std::string& out, size_t column, std::string_view text) {
  bool first = true;
  while (!text.empty()) {
    const size_t space = std::min(text.find(' '), text.size());
    const std::string_view word = text.substr(0, space);
    text.remove_prefix(std::min(space + 1, text.size()));
    if (word.empty()) continue;
    if (!first && column + 1 + word.size() > kHelpWidth) {
      out += '\n';
      out.append(kHelpColumn, ' ');
      column = kHelpColumn;
    } else if (!first) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    first = false;
  }
  out += '\n';
}

// "  --model ID                the default Gemini model (also --gemini-model; default …; $VAR)"
void AppendFlagHelp(std::string& out, const FlagSpec& spec, const Config& defaults) {
  std::string left = "  ";
  left += spec.name.empty() ? "$" + std::string(spec.env) : std::string(spec.name);
  if (!spec.value.empty()) left += " " + std::string(spec.value);
  std::vector<std::string> notes;
  if (!spec.alias.empty()) notes.push_back("also " + std::string(spec.alias));
  if (spec.default_text != nullptr) notes.push_back("default " + spec.default_text(defaults));
  if (spec.repeatable) notes.push_back("repeatable");
  if (!spec.name.empty() && !spec.env.empty()) {
    std::string list;
    if (spec.env_list == ',') list = ", comma-separated";
    if (spec.env_list == ':') list = ", separated by ':'";
    notes.push_back("$" + std::string(spec.env) + list);
  }
  std::string text(spec.help);
  for (size_t i = 0; i < notes.size(); ++i) text += (i == 0 ? " (" : "; ") + notes[i];
  if (!notes.empty()) text += ")";
  out += left;
  if (left.size() + 2 > kHelpColumn) {  // too long for the column: the text starts below
    out += '\n';
    out.append(kHelpColumn, ' ');
  } else {
    out.append(kHelpColumn - left.size(), ' ');
  }
  AppendWrapped(out, kHelpColumn, text);
}

constexpr std::string_view kHelpIntro =
    R"(imgmcp — MCP server for stateful image generation and editing

Usage: imgmcp [flags]                 serve MCP over stdio (the default)
       imgmcp --http [HOST:]PORT      serve MCP over Streamable HTTP on /mcp

Tools: generate_image, edit_image, get_image, reset_session. Every session is a durable chain
of numbered versions; edits of one session apply in arrival order.
)";

constexpr std::string_view kHelpOutro =
    R"(
A flag wins over its environment variable ($NAME above); an empty variable counts as unset.
)";

}  // namespace

std::filesystem::path DefaultDataDir(const EnvLookup& env) {
  if (auto v = env("XDG_DATA_HOME"); v && !v->empty()) return std::filesystem::path(*v) / "imgmcp";
  if (auto v = env("HOME"); v && !v->empty()) {
    return std::filesystem::path(*v) / ".local" / "share" / "imgmcp";
  }
  return std::filesystem::path(".imgmcp");
}

namespace {

// OAuth needs the HTTP listener, replaces --auth-token, and a listener other machines reach needs
// the public resource URI (its default, http://HOST:PORT/mcp, is accepted only on loopback).
Status CheckOAuthFlags(const Config& c) {
  if (c.oauth_issuers.empty()) {
    if (!c.oauth_resource.empty()) return FlagError("--oauth-resource", "needs --oauth-issuer");
    if (!c.oauth_introspection_url.empty()) {
      return FlagError("--oauth-introspection-url", "needs --oauth-issuer");
    }
    return Status::Ok();
  }
  if (!c.http_listen)
    return FlagError("--oauth-issuer", "needs --http (OAuth is for HTTP clients)");
  if (!c.auth_token.empty()) {
    return FlagError("--oauth-issuer",
                     "and --auth-token (IMGMCP_AUTH_TOKEN) exclude each other: with OAuth every "
                     "request carries its own access token");
  }
  if (!c.oauth_introspection_url.empty() &&
      (c.oauth_client_id.empty() || c.oauth_client_secret.empty())) {
    return FlagError("--oauth-introspection-url",
                     "needs --oauth-client-id and the IMGMCP_OAUTH_CLIENT_SECRET environment "
                     "variable (imgmcp's credentials at the introspection endpoint)");
  }
  if (c.oauth_resource.empty()) {
    auto url = oauth::ParseOAuthUrl(http::EndpointUrl(c.http_listen->host, 1), "--http");
    if (!url.ok()) {
      return FlagError("--oauth-issuer",
                       "with --http " + c.http_listen->host +
                           " needs --oauth-resource, the public https URL of /mcp");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<Config> ParseConfig(const std::vector<std::string>& args, const EnvLookup& env) {
  Config c;
  ASSIGN_OR_RETURN(const std::vector<GivenFlag> given, ReadArgs(args));
  RETURN_IF_ERROR(ApplyEnvironment(c, given, env));
  for (const GivenFlag& flag : given) RETURN_IF_ERROR(flag.spec->set(c, flag.written, flag.value));
  if (c.backend == BackendChoice::kGemini && c.gemini_api_key.empty()) {
    return FlagError("--backend gemini", "needs the GEMINI_API_KEY environment variable");
  }
  if (c.data_dir.empty()) c.data_dir = DefaultDataDir(env);
  RETURN_IF_ERROR(CheckOAuthFlags(c));
  return c;
}

std::string VersionText() { return std::string("imgmcp ") + IMGMCP_VERSION; }

std::string HelpText() {
  const Config defaults;
  std::string out(kHelpIntro);
  for (const FlagSpec& spec : kFlags) {
    if (!spec.heading.empty()) {
      out += "\n" + std::string(spec.heading) + ":\n";
    } else if (!spec.help.empty()) {
      AppendFlagHelp(out, spec, defaults);
    }
  }
  out += kHelpOutro;
  return out;
}

}  // namespace imgmcp::app
