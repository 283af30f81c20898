// ParseBaseUrl: plain string parsing, kept apart from http_call.cpp so that the client logic
// (imgmcp_gemini) needs no HTTP library.
#include <string>
#include <string_view>

#include "gemini_client/http_call.h"

namespace imgmcp::gemini {

Result<Endpoint> ParseBaseUrl(std::string_view base_url) {
  Endpoint endpoint;
  std::string_view rest;
  if (base_url.rfind("https://", 0) == 0) {
    endpoint.https = true;
    rest = base_url.substr(8);
  } else if (base_url.rfind("http://", 0) == 0) {
    rest = base_url.substr(7);
  } else {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the Gemini base URL must start with https:// or http://");
  }
  const size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  if (authority.empty() || authority.find_first_of("@?# \t\r\n") != std::string_view::npos ||
      path.find_first_of("?# \t\r\n") != std::string_view::npos) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the Gemini base URL must look like https://host[:port][/path], without "
                     "user info, query or fragment");
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  endpoint.scheme_host_port =
      std::string(endpoint.https ? "https://" : "http://") + std::string(authority);
  endpoint.path_prefix = std::string(path);
  return endpoint;
}

}  // namespace imgmcp::gemini
