#include "server/app/oauth_fetch.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "gemini_client/gemini_client.h"
#include "gemini_client/http_call.h"
#include "gemini_client/proxy.h"
#include "server/netmod/net_module_loader.h"
#include "server/oauth/oauth_urls.h"

namespace imgmcp::app {

namespace {

// An issuer answers within this, or its keys count as unavailable for now (the request that
// needed them gets 503, and the next one tries again).
constexpr auto kFetchDeadline = std::chrono::seconds(15);

Result<oauth::FetchedDocument> Fetch(const gemini::HttpCallOptions& http,
                                     const gemini::ProxyEnvironment& proxies,
                                     const std::string& url) {
  ASSIGN_OR_RETURN(const oauth::OAuthUrl parsed, oauth::ParseOAuthUrl(url, "an OAuth URL"));
  ASSIGN_OR_RETURN(const gemini::Endpoint endpoint, gemini::ParseBaseUrl(parsed.origin));
  gemini::HttpCallOptions options = http;
  ASSIGN_OR_RETURN(options.proxy, gemini::ChooseProxy(proxies, endpoint));
  gemini::HttpRequest request;
  request.method = "GET";
  request.path = parsed.path.empty() ? "/" : parsed.path;
  request.headers = {{"Accept", "application/json"}};
  request.peer = "the authorization server " + parsed.origin;
  request.max_answer_bytes = oauth::kMaxDiscoveryDocumentBytes;
  gemini::HttpFailure failure;
  ASSIGN_OR_RETURN(gemini::HttpAnswer answer,
                   netmod::SendHttpViaNetModule(endpoint, request, options, std::stop_token(),
                                                std::chrono::steady_clock::now() + kFetchDeadline,
                                                &failure));
  return oauth::FetchedDocument{answer.status, std::move(answer.body)};
}

}  // namespace

oauth::OAuthOptions MakeOAuthOptions(const Config& config) {
  oauth::OAuthOptions options;
  options.issuers = config.oauth_issuers;
  options.resource = config.oauth_resource;
  options.read_scope = config.oauth_read_scope;
  options.write_scope = config.oauth_write_scope;
  gemini::HttpCallOptions http;
  http.connect_timeout = std::chrono::seconds(5);
  http.read_timeout = std::chrono::seconds(10);
  http.extra_ca_file = config.ca_file;
  if (std::error_code ec; std::filesystem::exists(gemini::kSystemCaBundle, ec)) {
    http.ca_cert_path = gemini::kSystemCaBundle;
  }
  gemini::ProxyEnvironment proxies{config.https_proxy, config.http_proxy, config.no_proxy};
  options.fetch = [http = std::move(http), proxies = std::move(proxies)](const std::string& url) {
    return Fetch(http, proxies, url);
  };
  return options;
}

}  // namespace imgmcp::app
