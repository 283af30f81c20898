// ParseConfig and HelpText come from one table of flags: every flag, alias and environment
// variable is accepted and described in --help exactly once; flags win over variables; errors name
// the flag or variable and what it takes.
#include "server/app/config.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>
#include <vector>

#include "gemini_client/models.h"
#include "imaging/generation_params.h"

namespace imgmcp::app {
namespace {

using Env = std::map<std::string, std::string>;

Result<Config> Parse(const std::vector<std::string>& args, const Env& env = {}) {
  return ParseConfig(args, [env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

std::string ErrorOf(const std::vector<std::string>& args, const Env& env = {}) {
  auto config = Parse(args, env);
  EXPECT_FALSE(config.ok()) << "accepted";
  return config.ok() ? std::string() : config.error().message;
}

// Every flag imgmcp has taken, with a valid value ("" for a switch).
const std::vector<std::pair<std::string, std::string>> kEveryFlag = {
    {"--data-dir", "/tmp/d"},
    {"--backend", "local"},
    {"--gemini-base-url", "http://127.0.0.1:9"},
    {"--model", "gemini-2.5-flash-image"},
    {"--gemini-model", "gemini-2.5-flash-image"},
    {"--models", "gemini-2.5-flash-image"},
    {"--model-table", "/tmp/models.json"},
    {"--allow-retired", ""},
    {"--list-models", ""},
    {"--chain-turns", "2"},
    {"--gemini-timeout", "10"},
    {"--allow-read", "/tmp"},
    {"--preview-max-edge", "256"},
    {"--preview-max-bytes", "8192"},
    {"--max-image-bytes", "4096"},
    {"--max-pixels", "100"},
    {"--max-versions", "0"},
    {"--idle-days", "3"},
    {"--max-backend-calls", "2"},
    {"--max-inflight-mb", "64"},
    {"--cache-mb", "0"},
    {"--store", "sqlite"},
    {"--store-pool", "3"},
    {"--http", "127.0.0.1:0"},
    {"--auth-token", "t"},
    {"--allow-host", "myhost.lan"},
    {"--http-header-timeout", "5"},
    {"--http-max-sessions", "7"},
    {"--metrics", "127.0.0.1:0"},
    {"--log-level", "debug"},
    {"--conformance-fixtures", ""},
    {"--self-check", ""},
    {"--version", ""},
    {"--help", ""},
    {"-h", ""},
};

const std::vector<std::string> kEveryVariable = {
    "GEMINI_API_KEY",         "GEMINI_BASE_URL",   "IMGMCP_BACKEND",     "IMGMCP_GEMINI_MODEL",
    "IMGMCP_MODELS",          "IMGMCP_DATA_DIR",   "IMGMCP_AUTH_TOKEN",  "IMGMCP_ALLOW_HOSTS",
    "IMGMCP_STORE",           "IMGMCP_STORE_POOL", "XDG_DATA_HOME",      "HOME",
    "IMGMCP_MAX_INFLIGHT_MB", "IMGMCP_METRICS",    "IMGMCP_MODEL_TABLE",
};

size_t Count(const std::string& text, const std::regex& pattern) {
  return std::distance(std::sregex_iterator(text.begin(), text.end(), pattern),
                       std::sregex_iterator());
}

// How often `name` appears in `text` as a whole word.
size_t Mentions(const std::string& text, const std::string& name) {
  return Count(text, std::regex("(^|[^-A-Za-z_])" + name + "($|[^-A-Za-z_])"));
}

// How many entries of --help describe `flag`: lines that start with it, or name it as an alias.
size_t Entries(const std::string& help, const std::string& flag) {
  return Count(help, std::regex("\n  " + flag + "[ \n]")) +
         Count(help, std::regex("also " + flag + "[;)]"));
}

TEST(ConfigTest, EveryFlagIsAcceptedBothWaysAndDescribedOnce) {
  const std::string help = HelpText();
  for (const auto& [flag, value] : kEveryFlag) {
    SCOPED_TRACE(flag);
    std::vector<std::string> args = {flag};
    if (!value.empty()) args.push_back(value);
    auto config = Parse(args);
    EXPECT_TRUE(config.ok()) << config.error().message;
    if (!value.empty() && flag.rfind("--", 0) == 0) {
      auto joined = Parse({flag + "=" + value});
      EXPECT_TRUE(joined.ok()) << joined.error().message;
    }
    EXPECT_EQ(Entries(help, flag), 1u) << help;
  }
}

TEST(ConfigTest, EveryVariableIsInTheHelp) {
  const std::string help = HelpText();
  for (const std::string& name : kEveryVariable) {
    EXPECT_GE(Mentions(help, name), 1u) << name << "\n" << help;
  }
  EXPECT_EQ(Mentions(help, "IMGMCP_TEST_STORE_OPEN_GATE"), 0u) << "test hooks stay out";
}

TEST(ConfigTest, EveryFlagSetsItsField) {
  auto c = Parse({"--backend",
                  "local",
                  "--gemini-model",
                  "m1",
                  "--models",
                  "m1, m2",
                  "--chain-turns",
                  "2",
                  "--allow-read",
                  "/a",
                  "--allow-read",
                  "/b",
                  "--preview-max-bytes",
                  "8192",
                  "--max-pixels",
                  "100",
                  "--cache-mb",
                  "0",
                  "--http",
                  "127.0.0.1:0",
                  "--allow-host",
                  "h.test",
                  "--log-level",
                  "debug",
                  "--conformance-fixtures",
                  "--self-check",
                  "-h"});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->backend, BackendChoice::kLocal);
  EXPECT_EQ(c->gemini_model, "m1");
  EXPECT_EQ(c->gemini_models, (std::vector<std::string>{"m1", "m2"}));
  EXPECT_EQ(c->chain_turns, 2);
  EXPECT_EQ(c->allow_read, (std::vector<std::filesystem::path>{"/a", "/b"}));
  EXPECT_EQ(c->preview_max_bytes, 8192);
  EXPECT_EQ(c->max_pixels, 100);
  EXPECT_EQ(c->cache_mb, 0);
  ASSERT_TRUE(c->http_listen.has_value());
  EXPECT_EQ(c->http_listen->host, "127.0.0.1");
  EXPECT_EQ(c->allow_hosts, (std::vector<std::string>{"h.test"}));
  EXPECT_EQ(c->log_level, "debug");
  EXPECT_TRUE(c->conformance_fixtures);
  EXPECT_TRUE(c->self_check);
  EXPECT_TRUE(c->show_help);
  EXPECT_FALSE(c->show_version);
}

// The batch windows take decimal seconds, kept in milliseconds.
TEST(ConfigTest, BatchFlagsTakeSecondsWithDecimals) {
  auto c = Parse({"--batch-window", "0.5", "--batch-poll", "2", "--batch-max", "7"});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->batch_window_ms, 500);
  EXPECT_EQ(c->batch_poll_ms, 2000);
  EXPECT_EQ(c->batch_max, 7);
  auto defaults = Parse({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->batch_window_ms, 10'000);
  EXPECT_EQ(defaults->batch_poll_ms, 30'000);
}

TEST(ConfigTest, TheModelTableFlagsSetTheirFields) {
  auto c = Parse({"--model-table", "/etc/imgmcp/models.json", "--allow-retired", "--list-models"});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->model_table_file, "/etc/imgmcp/models.json");
  EXPECT_TRUE(c->allow_retired);
  EXPECT_TRUE(c->list_models);
  auto defaults = Parse({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->model_table_file, "");
  EXPECT_FALSE(defaults->allow_retired);
  EXPECT_FALSE(defaults->list_models);
  EXPECT_EQ(Parse({}, {{"IMGMCP_MODEL_TABLE", "/env.json"}})->model_table_file, "/env.json");
  EXPECT_EQ(Parse({"--model-table", "/flag.json"}, {{"IMGMCP_MODEL_TABLE", "/env.json"}})
                ->model_table_file,
            "/flag.json");
  EXPECT_NE(ErrorOf({"--model-table", ""}).find("--model-table: needs a JSON file"),
            std::string::npos);
}

TEST(ConfigTest, MetricsListenerFromTheFlagOrItsVariable) {
  EXPECT_FALSE(Parse({})->metrics_listen.has_value());
  auto c = Parse({"--metrics", "9464"});
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(c->metrics_listen.has_value());
  EXPECT_EQ(c->metrics_listen->host, "127.0.0.1");
  EXPECT_EQ(c->metrics_listen->port, 9464);
  c = Parse({}, {{"IMGMCP_METRICS", "[::1]:0"}});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->metrics_listen->host, "::1");
  c = Parse({"--metrics", "off"}, {{"IMGMCP_METRICS", "9464"}});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->metrics_off);
  EXPECT_FALSE(c->metrics_listen.has_value());
  EXPECT_NE(ErrorOf({"--metrics", "localhost:x"}).find("--metrics"), std::string::npos);
  EXPECT_NE(ErrorOf({}, {{"IMGMCP_METRICS", "70000"}}).find("IMGMCP_METRICS"), std::string::npos);
}

TEST(ConfigTest, DefaultsAreTheConfigDefaultsAndTheHelpShowsThem) {
  auto c = Parse({}, {{"HOME", "/home/u"}});
  ASSERT_TRUE(c.ok());
  const Config defaults;
  EXPECT_EQ(c->backend, BackendChoice::kAuto);
  EXPECT_EQ(c->store, "sqlite");
  EXPECT_EQ(c->store_pool, defaults.store_pool);
  EXPECT_EQ(c->max_versions, 100);
  EXPECT_EQ(c->preview_max_edge, 768);
  EXPECT_EQ(c->data_dir, "/home/u/.local/share/imgmcp");
  // The help with its line wrapping undone.
  const std::string help = std::regex_replace(HelpText(), std::regex("\\s+"), " ");
  EXPECT_NE(help.find("(default 768)"), std::string::npos) << help;
  EXPECT_NE(help.find("default " + std::to_string(defaults.chain_turns)), std::string::npos);
  EXPECT_NE(help.find("default gemini-3.1-flash-lite-image"), std::string::npos);
}

TEST(ConfigTest, ChainTurnsStopAtTheMostImagesAnyModelTakes) {
  EXPECT_EQ(Parse({"--chain-turns", std::to_string(imaging::kMostInputImages)})->chain_turns, 14);
  EXPECT_FALSE(Parse({"--chain-turns", "15"}).ok());
  EXPECT_FALSE(Parse({"--chain-turns", "16"}).ok());
  for (const auto& model : gemini::BuiltInGeminiModels()) {
    EXPECT_LE(model.max_input_images, imaging::kMostInputImages) << model.id;
  }
}

TEST(ConfigTest, DataDirComesFromTheFlagThenTheVariablesThenHome) {
  const Env env = {{"IMGMCP_DATA_DIR", "/env"}, {"XDG_DATA_HOME", "/xdg"}, {"HOME", "/home/u"}};
  EXPECT_EQ(Parse({"--data-dir", "/flag"}, env)->data_dir, "/flag");
  EXPECT_EQ(Parse({}, env)->data_dir, "/env");
  EXPECT_EQ(Parse({}, {{"XDG_DATA_HOME", "/xdg"}, {"HOME", "/home/u"}})->data_dir, "/xdg/imgmcp");
  EXPECT_EQ(Parse({}, {{"IMGMCP_DATA_DIR", ""}, {"HOME", "/h"}})->data_dir,
            "/h/.local/share/imgmcp");
}

TEST(ConfigTest, AFlagWinsOverItsVariable) {
  EXPECT_EQ(Parse({}, {{"IMGMCP_STORE_POOL", "5"}})->store_pool, 5);
  EXPECT_EQ(Parse({"--store-pool", "7"}, {{"IMGMCP_STORE_POOL", "5"}})->store_pool, 7);
  EXPECT_EQ(Parse({"--backend", "local"}, {{"IMGMCP_BACKEND", "bogus"}})->backend,
            BackendChoice::kLocal);
  EXPECT_EQ(Parse({"--model", "a"}, {{"IMGMCP_GEMINI_MODEL", "b"}})->gemini_model, "a");
  EXPECT_EQ(Parse({}, {{"IMGMCP_GEMINI_MODEL", "b"}})->gemini_model, "b");
  EXPECT_EQ(Parse({}, {{"IMGMCP_BACKEND", ""}})->backend, BackendChoice::kAuto);
}

TEST(ConfigTest, ARepeatableFlagAddsToItsVariable) {
  auto c = Parse({"--allow-host", "c.test"}, {{"IMGMCP_ALLOW_HOSTS", " a.test, ,b.test "}});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->allow_hosts, (std::vector<std::string>{"a.test", "b.test", "c.test"}));
}

TEST(ConfigTest, TheApiKeyComesFromTheEnvironmentOnly) {
  EXPECT_EQ(Parse({}, {{"GEMINI_API_KEY", "k"}})->gemini_api_key, "k");
  EXPECT_NE(ErrorOf({"--gemini-api-key", "k"}).find("unknown flag"), std::string::npos);
  std::string error = ErrorOf({"--backend", "gemini"});
  EXPECT_NE(error.find("--backend gemini: needs the GEMINI_API_KEY"), std::string::npos) << error;
  EXPECT_TRUE(Parse({"--backend", "gemini"}, {{"GEMINI_API_KEY", "k"}}).ok());
}

TEST(ConfigTest, ErrorsNameTheFlagOrVariableAndWhatItTakes) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--nope"}, "--nope: unknown flag (see imgmcp --help)"},
      {{"--nope=1"}, "--nope: unknown flag"},
      {{"stray"}, "stray: unknown flag"},
      {{"--chain-turns"}, "--chain-turns: needs a value"},
      {{"--chain-turns", "15"}, "--chain-turns: expected an integer from 1 to 14, got \"15\""},
      {{"--http-max-sessions", "x"}, "--http-max-sessions: expected an integer from 1 to"},
      {{"--http", "abc"}, "--http: "},
      {{"--data-dir", ""}, "--data-dir: must not be empty"},
      {{"--data-dir="}, "--data-dir: must not be empty"},
      {{"--backend", "cloud"}, "--backend: expected auto, gemini, vertex or local, got \"cloud\""},
      {{"--models", " , "}, "--models: needs a comma-separated list of model ids"},
      {{"--allow-host", "a/b"}, "--allow-host: expected a host name or address"},
      {{"--log-level", "loud"}, "--log-level: expected debug, info, warning, error or off"},
      {{"--help=yes"}, "--help: takes no value"},
      {{"--gemini-model"}, "--gemini-model: needs a value"},
      {{"--batch-window", "0.05"},
       "--batch-window: expected seconds from 0.1 to 3600, e.g. 10 or 0.5, got \"0.05\""},
      {{"--batch-poll", "soon"}, "--batch-poll: expected seconds from 0.1 to 3600"},
      {{"--batch-max", "101"}, "--batch-max: expected an integer from 1 to 100"},
  };
  for (const auto& [args, expected] : cases) {
    const std::string error = ErrorOf(args);
    EXPECT_NE(error.find(expected), std::string::npos) << args[0] << ": " << error;
  }
}

TEST(ConfigTest, VariableErrorsNameTheVariable) {
  EXPECT_NE(ErrorOf({}, {{"IMGMCP_STORE_POOL", "0"}}).find("IMGMCP_STORE_POOL: expected"),
            std::string::npos);
  EXPECT_NE(ErrorOf({}, {{"IMGMCP_BACKEND", "cloud"}}).find("IMGMCP_BACKEND: expected auto"),
            std::string::npos);
}

TEST(ConfigTest, AStoreUrlIsNeverRepeatedInAnError) {
  for (const std::string& where : {std::string("flag"), std::string("env")}) {
    const std::string url = "mysql://u:s3cret@h/db";
    const std::string error =
        where == "flag" ? ErrorOf({"--store", url}) : ErrorOf({}, {{"IMGMCP_STORE", url}});
    EXPECT_NE(error.find("expected sqlite or a postgresql:// URL"), std::string::npos) << error;
    EXPECT_EQ(error.find("s3cret"), std::string::npos) << error;
  }
  EXPECT_EQ(Parse({"--store", "postgresql://u@h/db"})->store, "postgresql://u@h/db");
  EXPECT_EQ(Parse({"--store", "postgres://u@h/db"})->store, "postgres://u@h/db");
}

TEST(ConfigTest, TestHooksComeFromTheEnvironment) {
  auto c = Parse({}, {{"IMGMCP_TEST_STORE_OPEN_GATE", "/tmp/gate"}});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->test_store_open_gate, "/tmp/gate");
  EXPECT_EQ(Mentions(HelpText(), "IMGMCP_TEST_STORE_OPEN_GATE"), 0u);
}

TEST(ConfigVertexTest, VertexSettingsComeFromFlagsOrGoogleVariables) {
  auto c = Parse({"--backend", "vertex", "--vertex-location", "us-central1"},
                 {{"GOOGLE_CLOUD_PROJECT", "my-project"},
                  {"GOOGLE_CLOUD_LOCATION", "europe-west4"},
                  {"GOOGLE_APPLICATION_CREDENTIALS", "/k.json"},
                  {"GCE_METADATA_HOST", "127.0.0.1:1"},
                  {"SSL_CERT_FILE", "/ca.pem"}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->backend, BackendChoice::kVertex);
  EXPECT_EQ(c->vertex_project, "my-project");
  EXPECT_EQ(c->vertex_location, "us-central1");
  EXPECT_EQ(c->google_application_credentials, "/k.json");
  EXPECT_EQ(c->gce_metadata_host, "127.0.0.1:1");
  EXPECT_EQ(c->ca_file, "/ca.pem");
  EXPECT_EQ(Parse({}, {})->vertex_location, "global");
}

TEST(ConfigVertexTest, LowerCaseProxyVariablesWin) {
  auto c = Parse({}, {{"HTTPS_PROXY", "http://upper:1"},
                      {"https_proxy", "http://lower:1"},
                      {"HTTP_PROXY", "http://plain:2"},
                      {"NO_PROXY", "a.lan"}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->https_proxy, "http://lower:1");
  EXPECT_EQ(c->http_proxy, "http://plain:2");
  EXPECT_EQ(c->no_proxy, "a.lan");
}

}  // namespace
}  // namespace imgmcp::app
