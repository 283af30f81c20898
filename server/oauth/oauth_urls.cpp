#include "server/oauth/oauth_urls.h"

#include "common/ascii.h"
#include "common/host_port.h"

namespace imgmcp::oauth {

namespace {

bool IsLoopbackName(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1";
}

}  // namespace

Result<OAuthUrl> ParseOAuthUrl(std::string_view url, std::string_view what) {
  const std::string named = std::string(what) + " '" + std::string(url) + "'";
  const std::string lowered = AsciiLower(url);
  bool https = false;
  std::string_view rest;
  if (lowered.rfind("https://", 0) == 0) {
    https = true;
    rest = url.substr(8);
  } else if (lowered.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else {
    return MakeError(ErrorCode::kInvalidArgument, named + " must be an https:// URL");
  }
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return MakeError(ErrorCode::kInvalidArgument, named + " must not have a query or fragment");
  }
  const size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  if (authority.empty() || authority.find('@') != std::string_view::npos) {
    return MakeError(ErrorCode::kInvalidArgument,
                     named + " must name a host (and no user information)");
  }
  const Result<HostPort> host = SplitHostPort(authority);
  if (!host.ok() || host->host.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, named + " does not name a valid host[:port]");
  }
  if (!https && !IsLoopbackName(AsciiLower(host->host))) {
    return MakeError(ErrorCode::kInvalidArgument,
                     named +
                         " must be https://: plain http is allowed only to a loopback host "
                         "(127.0.0.1, localhost, [::1])");
  }
  OAuthUrl parsed;
  parsed.origin = std::string(url.substr(0, url.size() - rest.size() + authority.size()));
  parsed.path = slash == std::string_view::npos ? "" : std::string(rest.substr(slash));
  return parsed;
}

std::vector<std::string> IssuerMetadataUrls(const OAuthUrl& issuer) {
  std::string path = issuer.path;
  if (!path.empty() && path.back() == '/') path.pop_back();
  return {issuer.origin + "/.well-known/oauth-authorization-server" + path,
          issuer.origin + path + "/.well-known/openid-configuration"};
}

std::string ProtectedResourceMetadataUrl(const OAuthUrl& resource) {
  std::string path = resource.path == "/" ? "" : resource.path;
  return resource.origin + "/.well-known/oauth-protected-resource" + path;
}

}  // namespace imgmcp::oauth
