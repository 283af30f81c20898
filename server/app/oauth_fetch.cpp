#include "server/app/oauth_fetch.h"

#include <memory>
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

struct Network {
  gemini::HttpCallOptions http;
  gemini::ProxyEnvironment proxies;
};

// One GET (`form` empty) or form POST to an authorization server.
Result<oauth::FetchedDocument> Send(const Network& network, const std::string& url,
                                    const std::string& form, const std::string& authorization) {
  ASSIGN_OR_RETURN(const oauth::OAuthUrl parsed, oauth::ParseOAuthUrl(url, "an OAuth URL"));
  ASSIGN_OR_RETURN(const gemini::Endpoint endpoint, gemini::ParseBaseUrl(parsed.origin));
  gemini::HttpCallOptions options = network.http;
  ASSIGN_OR_RETURN(options.proxy, gemini::ChooseProxy(network.proxies, endpoint));
  gemini::HttpRequest request;
  request.method = form.empty() ? "GET" : "POST";
  request.path = parsed.path.empty() ? "/" : parsed.path;
  request.headers = {{"Accept", "application/json"}};
  if (!authorization.empty()) request.headers.emplace_back("Authorization", authorization);
  if (!form.empty()) {
    request.content_type = "application/x-www-form-urlencoded";
    request.body = form;
  }
  request.peer = "the authorization server " + parsed.origin;
  request.max_answer_bytes = oauth::kMaxDiscoveryDocumentBytes;
  gemini::HttpFailure failure;
  ASSIGN_OR_RETURN(
      gemini::HttpAnswer answer,
      netmod::SendHttpViaNetModule(endpoint, request, options, std::stop_token(),
                                   std::chrono::steady_clock::now() + kFetchDeadline, &failure));
  return oauth::FetchedDocument{answer.status, std::move(answer.body)};
}

}  // namespace

oauth::OAuthOptions MakeOAuthOptions(const Config& config) {
  oauth::OAuthOptions options;
  options.issuers = config.oauth_issuers;
  options.resource = config.oauth_resource;
  options.read_scope = config.oauth_read_scope;
  options.write_scope = config.oauth_write_scope;
  options.introspection_url = config.oauth_introspection_url;
  options.client_id = config.oauth_client_id;
  options.client_secret = config.oauth_client_secret;
  auto network = std::make_shared<Network>();
  network->http.connect_timeout = std::chrono::seconds(5);
  network->http.read_timeout = std::chrono::seconds(10);
  network->http.extra_ca_file = config.ca_file;
  network->http.ca_cert_path = gemini::SystemCaBundleIfPresent();
  network->proxies = {config.https_proxy, config.http_proxy, config.no_proxy};
  options.fetch = [network](const std::string& url) { return Send(*network, url, "", ""); };
  options.post_form = [network](const std::string& url, const std::string& form,
                                const std::string& authorization) {
    return Send(*network, url, form, authorization);
  };
  return options;
}

}  // namespace imgmcp::app
