#include "server/app/config.h"

#include <charconv>

#include "gemini_client/models.h"

namespace imgmcp::app {
namespace {

Error FlagError(const std::string& flag, const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, flag + ": " + message + " (see imgmcp --help)");
}

Result<int64_t> ParseInt(const std::string& flag, const std::string& text, int64_t min,
                         int64_t max) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v < min || v > max) {
    return FlagError(flag, "expected an integer from " + std::to_string(min) + " to " +
                               std::to_string(max) + ", got \"" + text + "\"");
  }
  return v;
}

}  // namespace

std::filesystem::path DefaultDataDir(const EnvLookup& env) {
  if (auto v = env("IMGMCP_DATA_DIR"); v && !v->empty()) return *v;
  if (auto v = env("XDG_DATA_HOME"); v && !v->empty()) return std::filesystem::path(*v) / "imgmcp";
  if (auto v = env("HOME"); v && !v->empty()) {
    return std::filesystem::path(*v) / ".local" / "share" / "imgmcp";
  }
  return std::filesystem::path(".imgmcp");
}

Result<Config> ParseConfig(const std::vector<std::string>& args, const EnvLookup& env) {
  Config c;
  if (auto v = env("GEMINI_API_KEY")) c.gemini_api_key = *v;
  if (auto v = env("GEMINI_BASE_URL"); v && !v->empty()) c.gemini_base_url = *v;
  if (auto v = env("IMGMCP_GEMINI_MODEL"); v && !v->empty()) c.gemini_model = *v;
  if (auto v = env("IMGMCP_MODELS"); v && !v->empty()) c.gemini_models = gemini::SplitModelList(*v);
  if (auto v = env("IMGMCP_AUTH_TOKEN")) c.auth_token = *v;
  if (auto v = env("IMGMCP_ALLOW_HOSTS")) {
    for (size_t start = 0; start <= v->size();) {
      size_t comma = v->find(',', start);
      if (comma == std::string::npos) comma = v->size();
      std::string host = v->substr(start, comma - start);
      while (!host.empty() && host.front() == ' ') host.erase(0, 1);
      while (!host.empty() && host.back() == ' ') host.pop_back();
      if (!host.empty()) c.allow_hosts.push_back(host);
      start = comma + 1;
    }
  }
  if (auto v = env("IMGMCP_TEST_SLOW_STORE_OPEN_MS"); v && !v->empty()) {
    auto ms = ParseInt("IMGMCP_TEST_SLOW_STORE_OPEN_MS", *v, 0, 600'000);
    if (!ms.ok()) return ms.error();
    c.test_store_open_delay_ms = static_cast<int>(*ms);
  }
  if (auto v = env("IMGMCP_STORE"); v && !v->empty()) c.store = *v;
  if (auto v = env("IMGMCP_STORE_POOL"); v && !v->empty()) {
    auto n = ParseInt("IMGMCP_STORE_POOL", *v, 1, 1000);
    if (!n.ok()) return n.error();
    c.store_pool = static_cast<int>(*n);
  }
  std::optional<std::string> backend_text = env("IMGMCP_BACKEND");
  std::optional<std::filesystem::path> data_dir;

  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> inline_value;
    if (flag.rfind("--", 0) == 0) {
      if (auto eq = flag.find('='); eq != std::string::npos) {
        inline_value = flag.substr(eq + 1);
        flag = flag.substr(0, eq);
      }
    }
    auto value = [&]() -> Result<std::string> {
      if (inline_value) return *inline_value;
      if (i + 1 >= args.size()) return FlagError(flag, "needs a value");
      return args[++i];
    };
    auto int_value = [&](int64_t min, int64_t max) -> Result<int64_t> {
      auto v = value();
      if (!v.ok()) return v.error();
      return ParseInt(flag, *v, min, max);
    };
#define IMGMCP_TAKE(expr, target)          \
  do {                                     \
    auto taken = (expr);                   \
    if (!taken.ok()) return taken.error(); \
    target = *taken;                       \
  } while (0)
    if (flag == "--help" || flag == "-h") {
      c.show_help = true;
    } else if (flag == "--version") {
      c.show_version = true;
    } else if (flag == "--self-check") {
      c.self_check = true;
    } else if (flag == "--conformance-fixtures") {
      c.conformance_fixtures = true;
    } else if (flag == "--data-dir") {
      std::string v;
      IMGMCP_TAKE(value(), v);
      if (v.empty()) return FlagError(flag, "must not be empty");
      data_dir = v;
    } else if (flag == "--backend") {
      std::string v;
      IMGMCP_TAKE(value(), v);
      backend_text = v;
    } else if (flag == "--gemini-base-url") {
      IMGMCP_TAKE(value(), c.gemini_base_url);
    } else if (flag == "--model" || flag == "--gemini-model") {
      IMGMCP_TAKE(value(), c.gemini_model);
    } else if (flag == "--models") {
      std::string v;
      IMGMCP_TAKE(value(), v);
      c.gemini_models = gemini::SplitModelList(v);
      if (c.gemini_models.empty())
        return FlagError(flag, "needs a comma-separated list of model ids");
    } else if (flag == "--chain-turns") {
      IMGMCP_TAKE(int_value(1, 16), c.chain_turns);
    } else if (flag == "--gemini-timeout") {
      IMGMCP_TAKE(int_value(1, 3600), c.gemini_timeout_seconds);
    } else if (flag == "--allow-read") {
      std::string v;
      IMGMCP_TAKE(value(), v);
      c.allow_read.emplace_back(v);
    } else if (flag == "--preview-max-edge") {
      IMGMCP_TAKE(int_value(16, 8192), c.preview_max_edge);
    } else if (flag == "--preview-max-bytes") {
      IMGMCP_TAKE(int_value(4096, 64LL << 20), c.preview_max_bytes);
    } else if (flag == "--max-image-bytes") {
      IMGMCP_TAKE(int_value(1024, 1LL << 30), c.max_image_bytes);
    } else if (flag == "--max-pixels") {
      IMGMCP_TAKE(int_value(1, 1LL << 31), c.max_pixels);
    } else if (flag == "--max-versions") {
      IMGMCP_TAKE(int_value(0, 1'000'000), c.max_versions);
    } else if (flag == "--idle-days") {
      IMGMCP_TAKE(int_value(0, 100'000), c.idle_days);
    } else if (flag == "--max-backend-calls") {
      IMGMCP_TAKE(int_value(1, 1024), c.max_backend_calls);
    } else if (flag == "--cache-mb") {
      IMGMCP_TAKE(int_value(0, 1 << 20), c.cache_mb);
    } else if (flag == "--store") {
      IMGMCP_TAKE(value(), c.store);
    } else if (flag == "--store-pool") {
      IMGMCP_TAKE(int_value(1, 1000), c.store_pool);
    } else if (flag == "--http") {
      std::string v;
      IMGMCP_TAKE(value(), v);
      auto address = http::ParseListenAddress(v);
      if (!address.ok()) return FlagError(flag, address.error().message);
      c.http_listen = *address;
    } else if (flag == "--auth-token") {
      IMGMCP_TAKE(value(), c.auth_token);
    } else if (flag == "--allow-host") {
      std::string v;
      IMGMCP_TAKE(value(), v);
      if (v.empty() || v.find_first_of(" /\t") != std::string::npos) {
        return FlagError(flag,
                         "expected a host name or address (e.g. myhost.lan, 192.168.1.5 "
                         "or [fd00::5]), got \"" +
                             v + "\"");
      }
      c.allow_hosts.push_back(v);
    } else if (flag == "--http-header-timeout") {
      IMGMCP_TAKE(int_value(1, 3600), c.http_header_timeout_seconds);
    } else if (flag == "--http-max-sessions") {
      IMGMCP_TAKE(int_value(1, 1'000'000), c.http_max_sessions);
    } else if (flag == "--log-level") {
      IMGMCP_TAKE(value(), c.log_level);
      if (c.log_level != "debug" && c.log_level != "info" && c.log_level != "warning" &&
          c.log_level != "error" && c.log_level != "off") {
        return FlagError(flag, "expected debug, info, warning, error or off");
      }
    } else {
      return FlagError(flag, "unknown flag");
    }
#undef IMGMCP_TAKE
  }
  if (backend_text) {
    if (*backend_text == "auto") {
      c.backend = BackendChoice::kAuto;
    } else if (*backend_text == "gemini") {
      c.backend = BackendChoice::kGemini;
    } else if (*backend_text == "local") {
      c.backend = BackendChoice::kLocal;
    } else {
      return FlagError("--backend",
                       "expected auto, gemini or local, got \"" + *backend_text + "\"");
    }
  }
  if (c.backend == BackendChoice::kGemini && c.gemini_api_key.empty()) {
    return FlagError("--backend gemini", "needs the GEMINI_API_KEY environment variable");
  }
  if (c.store != "sqlite" && c.store.rfind("postgresql://", 0) != 0 &&
      c.store.rfind("postgres://", 0) != 0) {
    // The value is not repeated: it may be a URL with a password in it.
    return FlagError("--store", "expected sqlite or a postgresql:// URL");
  }
  c.data_dir = data_dir ? *data_dir : DefaultDataDir(env);
  return c;
}

std::string VersionText() { return std::string("imgmcp ") + IMGMCP_VERSION; }

std::string HelpText() {
  return R"(imgmcp — MCP server for stateful image generation and editing

Usage: imgmcp [flags]                 serve MCP over stdio (the default)
       imgmcp --http [HOST:]PORT      serve MCP over Streamable HTTP on /mcp

Tools: generate_image, edit_image, get_image, reset_session. Every session is a durable chain
of numbered versions; edits of one session apply in arrival order.

Flags:
  --data-dir DIR            where sessions live (default: $IMGMCP_DATA_DIR, else
                            $XDG_DATA_HOME/imgmcp, else ~/.local/share/imgmcp)
  --backend auto|gemini|local
                            auto (default): gemini when GEMINI_API_KEY is set, else the offline
                            local engine ($IMGMCP_BACKEND)
  --model ID                the default Gemini model (also --gemini-model; default
                            gemini-3.1-flash-lite-image; $IMGMCP_GEMINI_MODEL)
  --models ID,ID,...        the Gemini models callers may choose with `model` (default: all of
                            gemini-3.1-flash-lite-image, gemini-3.1-flash-image(-preview),
                            gemini-3-pro-image(-preview), gemini-2.5-flash-image;
                            $IMGMCP_MODELS); the default model must be among them
  --chain-turns N           earlier turns an edit with context "chain" replays, 1-16 (default )" +
         std::to_string(tools::kDefaultChainTurns) + R"()
  --gemini-base-url URL     default https://generativelanguage.googleapis.com ($GEMINI_BASE_URL)
  --gemini-timeout SECONDS  overall limit of one Gemini call, retries included (default 300)
  --allow-read DIR          allow image {path} inputs from DIR (repeatable; the working
                            directory and the data dir are always allowed)
  --preview-max-edge PX     long edge of inline previews (default 768)
  --preview-max-bytes N     byte budget of inline previews (default 614400)
  --max-image-bytes N       largest accepted image file or upload (default 67108864)
  --max-pixels N            largest accepted width*height (default 50000000)
  --max-versions N          versions kept per session, 0 = all (default 100)
  --idle-days N             expire sessions idle this long, 0 = never (default 0)
  --max-backend-calls N     concurrent backend calls across sessions (default )" +
         std::to_string(tools::kDefaultMaxConcurrentBackendCalls) + R"()
  --cache-mb N              in-memory cache of recent images (default 64)
  --store sqlite|postgresql://USER[:PASSWORD]@HOST[:PORT]/DB[?...]
                            where versions are kept: sqlite (default) in the data dir, or one
                            PostgreSQL database shared by every replica, the data dir holding
                            this replica's local copies ($IMGMCP_STORE)
  --store-pool N            PostgreSQL connections at most, per replica (default 10;
                            $IMGMCP_STORE_POOL)
  --http [HOST:]PORT        Streamable HTTP instead of stdio (default host 127.0.0.1)
  --auth-token TOKEN        require "Authorization: Bearer TOKEN" over HTTP ($IMGMCP_AUTH_TOKEN)
  --allow-host NAME         also accept NAME (a host name or address) in HTTP Host/Origin
                            headers (repeatable; $IMGMCP_ALLOW_HOSTS, comma-separated). Loopback
                            names and an explicit bind address are always accepted
  --http-header-timeout S   a request head must arrive whole within S seconds (default 10)
  --http-max-sessions N     HTTP sessions at once; when full, the longest idle one is ended
                            (default 4096)
  --conformance-fixtures    add the MCP conformance suite's test tools, resources and prompts
  --log-level LEVEL         debug, info, warning, error or off (stderr only; default info)
  --self-check              open the data dir and backend, report, and exit
  --version, --help

Environment: GEMINI_API_KEY (never logged or stored), GEMINI_BASE_URL, IMGMCP_BACKEND,
IMGMCP_GEMINI_MODEL, IMGMCP_MODELS, IMGMCP_DATA_DIR, IMGMCP_AUTH_TOKEN, IMGMCP_ALLOW_HOSTS,
IMGMCP_STORE, IMGMCP_STORE_POOL, XDG_DATA_HOME, HOME.
)";
}

}  // namespace imgmcp::app
