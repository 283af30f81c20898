#include "server/netmod/net_module_loader.h"

#include <dlfcn.h>

#include <cstring>
#include <system_error>

#include "common/log.h"

namespace imgmcp::netmod {
namespace {

constexpr char kRelativePath[] = "../lib/imgmcp/libimgmcp_net.so";
constexpr char kRestoreHint[] =
    "; it is built with imgmcp (lib/imgmcp/ beside bin/) and installed by `cmake --install`";

Error ModuleError(const std::string& what) {
  return MakeError(ErrorCode::kFailedPrecondition,
                   "imgmcp's network module (HTTP and HTTPS) " + what + kRestoreHint);
}

Result<const NetModuleApi*> Load() {
  const std::filesystem::path path = NetModulePath();
  RETURN_IF_ERROR(CheckNetModuleInstalled());
  // RTLD_NOW: a module from another build fails here, with the missing symbol named, rather
  // than in the middle of a call.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return ModuleError("could not be loaded from " + path.string() + ": " +
                       (why != nullptr ? why : "unknown error"));
  }
  using EntryPoint = const NetModuleApi* (*)();
  auto entry = reinterpret_cast<EntryPoint>(dlsym(handle, kEntryPoint));
  const NetModuleApi* api = entry != nullptr ? entry() : nullptr;
  if (api == nullptr || api->build_tag == nullptr || std::strcmp(api->build_tag, kBuildTag) != 0 ||
      api->post_json == nullptr || api->new_http_listener == nullptr) {
    // The handle stays open: unloading code that may have run is not worth the risk.
    return ModuleError("at " + path.string() + " comes from another build (" +
                       (api != nullptr && api->build_tag != nullptr ? api->build_tag : "no tag") +
                       "; this binary is " + kBuildTag + ")");
  }
  log::Debug("netmod", "loaded " + path.string());
  return api;
}

}  // namespace

std::filesystem::path NetModulePath() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) self = "/usr/local/bin/imgmcp";  // no procfs: the default install location
  return (self.parent_path() / kRelativePath).lexically_normal();
}

Status CheckNetModuleInstalled() {
  const std::filesystem::path path = NetModulePath();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return ModuleError("is missing: expected " + path.string());
  }
  return Status::Ok();
}

Result<const NetModuleApi*> LoadNetModule() {
  static const Result<const NetModuleApi*> loaded = Load();  // thread-safe, once
  return loaded;
}

Result<gemini::HttpAnswer> PostJsonViaNetModule(
    const gemini::Endpoint& endpoint, const std::string& path, const std::string& api_key,
    const std::string& body, const gemini::HttpCallOptions& options, std::stop_token cancel,
    std::chrono::steady_clock::time_point deadline, gemini::HttpFailure* failure) {
  auto api = LoadNetModule();
  if (!api.ok()) {
    if (failure != nullptr) *failure = gemini::HttpFailure{};
    return api.error();
  }
  return (*api)->post_json(endpoint, path, api_key, body, options, cancel, deadline, failure);
}

Result<gemini::HttpAnswer> SendHttpViaNetModule(const gemini::Endpoint& endpoint,
                                                const gemini::HttpRequest& request,
                                                const gemini::HttpCallOptions& options,
                                                std::stop_token cancel,
                                                std::chrono::steady_clock::time_point deadline,
                                                gemini::HttpFailure* failure) {
  auto api = LoadNetModule();
  if (!api.ok()) {
    if (failure != nullptr) *failure = gemini::HttpFailure{};
    return api.error();
  }
  return (*api)->send_http(endpoint, request, options, cancel, deadline, failure);
}

Result<std::string> SignRs256ViaNetModule(const std::string& private_key_pem,
                                          const std::string& data) {
  ASSIGN_OR_RETURN(const NetModuleApi* api, LoadNetModule());
  return api->sign_rs256(private_key_pem, data);
}

Result<std::unique_ptr<metrics::Metrics>> NewMetricsViaNetModule() {
  ASSIGN_OR_RETURN(const NetModuleApi* api, LoadNetModule());
  return api->new_metrics();
}

}  // namespace imgmcp::netmod
