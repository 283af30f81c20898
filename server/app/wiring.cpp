#include "server/app/wiring.h"

#include <filesystem>

#include "gemini_client/gemini_client.h"
#include "imaging/local_backend.h"
#include "server/netmod/net_module_loader.h"

namespace imgmcp::app {

Result<BackendSelection> MakeBackend(const Config& config) {
  BackendSelection selection;
  const bool use_gemini =
      config.backend == BackendChoice::kGemini ||
      (config.backend == BackendChoice::kAuto && !config.gemini_api_key.empty());
  if (use_gemini) {
    gemini::GeminiClientOptions options;
    options.api_key = config.gemini_api_key;
    options.base_url = config.gemini_base_url;
    options.model = config.gemini_model;
    options.call_timeout = std::chrono::seconds(config.gemini_timeout_seconds);
    // The HTTP code loads on the first call; that it is installed is checked now.
    if (Status s = netmod::CheckNetModuleInstalled(); !s.ok()) return s.error();
    auto client = gemini::GeminiClient::Create(std::move(options), &netmod::PostJsonViaNetModule);
    if (!client.ok()) return client.error();
    selection.backend = std::move(*client);
    return selection;
  }
  imaging::LocalBackendOptions options;
  options.limits.max_bytes = config.max_image_bytes;
  options.limits.max_pixels = config.max_pixels;
  selection.backend = std::make_unique<imaging::LocalBackend>(options);
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
  return options;
}

}  // namespace imgmcp::app
