#include "gemini_client/oauth_sources.h"

#include <chrono>
#include <utility>

#include "common/base64.h"
#include "common/json.h"

namespace imgmcp::gemini {
namespace {

constexpr int64_t kJwtLifetimeSeconds = 3600;

std::string Base64Url(std::string_view bytes) {
  std::string out = Base64Encode(bytes);
  for (char& c : out) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  while (!out.empty() && out.back() == '=') out.pop_back();
  return out;
}

// A token endpoint's answer: {"access_token": "...", "expires_in": N}; else an error naming
// `who` and the OAuth error code and description (which never carry the credential).
Result<AccessToken> ParseTokenAnswer(const HttpAnswer& answer, const std::string& who) {
  const Json json = Json::parse(answer.body, nullptr, /*allow_exceptions=*/false);
  if (answer.status != 200) {
    std::string why = "HTTP " + std::to_string(answer.status);
    if (json.is_object() && json.contains("error") && json["error"].is_string()) {
      why += " " + json["error"].get<std::string>().substr(0, 80);
      if (json.contains("error_description") && json["error_description"].is_string()) {
        why += ": " + json["error_description"].get<std::string>().substr(0, 200);
      }
    }
    const ErrorCode code = answer.status >= 500 || answer.status == 429
                               ? ErrorCode::kUnavailable
                               : ErrorCode::kPermissionDenied;
    return Error(code, who + " refused the token request (" + why + ")");
  }
  if (!json.is_object() || !json.contains("access_token") || !json["access_token"].is_string() ||
      json["access_token"].get<std::string>().empty()) {
    return Error(ErrorCode::kUnavailable, who + " answered without an access_token");
  }
  AccessToken token;
  token.token = json["access_token"].get<std::string>();
  token.expires_in = std::chrono::seconds(3600);
  if (json.contains("expires_in") && json["expires_in"].is_number()) {
    token.expires_in = std::chrono::seconds(json["expires_in"].get<int64_t>());
  }
  return token;
}

// Fetch's wrapper: the request and its answer, errors prefixed with where the credential came
// from.
Result<AccessToken> Exchange(const NetworkAccess& access, const std::string& url,
                             HttpRequest request, const std::string& origin, std::stop_token cancel,
                             std::chrono::steady_clock::time_point deadline) {
  const std::string who = "the token endpoint " + url;
  request.peer = who;
  auto answer = SendTo(access, url, std::move(request), cancel, deadline);
  if (!answer.ok()) {
    return Error(answer.error().code,
                 "could not get an access token for " + origin + ": " + answer.error().message);
  }
  auto token = ParseTokenAnswer(*answer, who);
  if (!token.ok()) {
    return Error(token.error().code, origin + ": " + token.error().message);
  }
  return token;
}

class ServiceAccountSource final : public TokenSource {
 public:
  ServiceAccountSource(const AdcCredentials& c, NetworkAccess access)
      : file_(c.file),
        email_(c.json.at("client_email").get<std::string>()),
        key_id_(c.json.value("private_key_id", std::string())),
        key_(c.json.at("private_key").get<std::string>()),
        token_uri_(c.json.at("token_uri").get<std::string>()),
        access_(std::move(access)) {}

  Result<AccessToken> Fetch(std::stop_token cancel,
                            std::chrono::steady_clock::time_point deadline) override {
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    auto jwt = MakeServiceAccountJwt(email_, key_id_, key_, token_uri_, now, access_.sign);
    if (!jwt.ok()) {
      return Error(ErrorCode::kFailedPrecondition,
                   "the service account key in " + file_ + " cannot sign: " + jwt.error().message);
    }
    HttpRequest request;
    request.content_type = "application/x-www-form-urlencoded";
    const std::string body =
        "grant_type=" + FormEncode("urn:ietf:params:oauth:grant-type:jwt-bearer") +
        "&assertion=" + *jwt;
    request.body = body;
    return Exchange(access_, token_uri_, std::move(request), Describe(), cancel, deadline);
  }
  std::string Describe() const override { return "service_account " + email_ + " from " + file_; }

 private:
  const std::string file_, email_, key_id_, key_, token_uri_;
  const NetworkAccess access_;
};

class AuthorizedUserSource final : public TokenSource {
 public:
  AuthorizedUserSource(const AdcCredentials& c, NetworkAccess access)
      : file_(c.file),
        client_id_(c.json.at("client_id").get<std::string>()),
        client_secret_(c.json.at("client_secret").get<std::string>()),
        refresh_token_(c.json.at("refresh_token").get<std::string>()),
        token_uri_(c.json.at("token_uri").get<std::string>()),
        access_(std::move(access)) {}

  Result<AccessToken> Fetch(std::stop_token cancel,
                            std::chrono::steady_clock::time_point deadline) override {
    HttpRequest request;
    request.content_type = "application/x-www-form-urlencoded";
    const std::string body = "grant_type=refresh_token&client_id=" + FormEncode(client_id_) +
                             "&client_secret=" + FormEncode(client_secret_) +
                             "&refresh_token=" + FormEncode(refresh_token_);
    request.body = body;
    return Exchange(access_, token_uri_, std::move(request), Describe(), cancel, deadline);
  }
  std::string Describe() const override { return "authorized_user from " + file_; }

 private:
  const std::string file_, client_id_, client_secret_, refresh_token_, token_uri_;
  const NetworkAccess access_;
};

class MetadataSource final : public TokenSource {
 public:
  MetadataSource(std::string host, NetworkAccess access)
      : host_(std::move(host)), access_(std::move(access)) {
    access_.proxies = ProxyEnvironment{};  // the metadata server is link-local: never proxied
    access_.http.connect_timeout =
        std::min(access_.http.connect_timeout, std::chrono::milliseconds(3000));
  }

  Result<AccessToken> Fetch(std::stop_token cancel,
                            std::chrono::steady_clock::time_point deadline) override {
    HttpRequest request;
    request.method = "GET";
    request.headers = {{"Metadata-Flavor", "Google"}};
    const std::string url =
        "http://" + host_ + "/computeMetadata/v1/instance/service-accounts/default/token";
    auto token = Exchange(access_, url, std::move(request), Describe(), cancel, deadline);
    if (!token.ok() && token.error().code != ErrorCode::kCancelled) {
      return Error(token.error().code,
                   token.error().message +
                       ". No credential file was found, so the metadata server of a Google Cloud "
                       "machine was asked; elsewhere set GOOGLE_APPLICATION_CREDENTIALS or run "
                       "`gcloud auth application-default login`");
    }
    return token;
  }
  std::string Describe() const override { return "metadata server at " + host_; }

 private:
  const std::string host_;
  NetworkAccess access_;
};

}  // namespace

std::string FormEncode(const std::string& value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

Result<std::string> MakeServiceAccountJwt(const std::string& client_email,
                                          const std::string& private_key_id,
                                          const std::string& private_key_pem,
                                          const std::string& audience, int64_t issued_at,
                                          SignRs256Function sign) {
  Json header = {{"alg", "RS256"}, {"typ", "JWT"}};
  if (!private_key_id.empty()) header["kid"] = private_key_id;
  const Json claims = {{"iss", client_email},
                       {"scope", kCloudPlatformScope},
                       {"aud", audience},
                       {"iat", issued_at},
                       {"exp", issued_at + kJwtLifetimeSeconds}};
  const std::string signing_input = Base64Url(header.dump()) + "." + Base64Url(claims.dump());
  if (sign == nullptr) return MakeError(ErrorCode::kInternal, "no signing function");
  ASSIGN_OR_RETURN(const std::string signature, sign(private_key_pem, signing_input));
  return signing_input + "." + Base64Url(signature);
}

std::unique_ptr<TokenSource> MakeServiceAccountSource(const AdcCredentials& credentials,
                                                      const NetworkAccess& access) {
  return std::make_unique<ServiceAccountSource>(credentials, access);
}

std::unique_ptr<TokenSource> MakeAuthorizedUserSource(const AdcCredentials& credentials,
                                                      const NetworkAccess& access) {
  return std::make_unique<AuthorizedUserSource>(credentials, access);
}

std::unique_ptr<TokenSource> MakeMetadataSource(const std::string& host,
                                                const NetworkAccess& access) {
  return std::make_unique<MetadataSource>(host, access);
}

}  // namespace imgmcp::gemini
