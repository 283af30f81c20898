#include "gemini_client/token_source.h"

#include <utility>

namespace imgmcp::gemini {

Result<HttpAnswer> SendTo(const NetworkAccess& access, const std::string& url, HttpRequest request,
                          std::stop_token cancel, std::chrono::steady_clock::time_point deadline) {
  ASSIGN_OR_RETURN(const Endpoint endpoint, ParseBaseUrl(url));
  if (access.send == nullptr) {
    return MakeError(ErrorCode::kInternal, "no HTTP function to reach " + url);
  }
  HttpCallOptions options = access.http;
  ASSIGN_OR_RETURN(options.proxy, ChooseProxy(access.proxies, endpoint));
  request.path = endpoint.path_prefix + request.path;
  Endpoint origin = endpoint;
  origin.path_prefix.clear();
  HttpFailure failure;
  return access.send(origin, request, options, cancel, deadline, &failure);
}

}  // namespace imgmcp::gemini
