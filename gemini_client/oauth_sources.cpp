#include "gemini_client/oauth_sources.h"

#include <chrono>
#include <utility>

#include "common/ascii.h"
#include "common/base64.h"
#include "common/json.h"
#include "gemini_client/redact.h"

namespace imgmcp::gemini {
namespace {

constexpr int64_t kJwtLifetimeSeconds = 3600;

// expires_in as a lifetime within [kMinTokenLifetime, kMaxTokenLifetime]; read as a double, so
// that 1e300 or -5.5 is compared, never converted to an integer out of range.
std::chrono::seconds TokenLifetime(const Json& expires_in) {
  if (!expires_in.is_number()) return std::chrono::seconds(3600);
  const double seconds = expires_in.get<double>();
  const double low = static_cast<double>(kMinTokenLifetime.count());
  const double high = static_cast<double>(kMaxTokenLifetime.count());
  if (!(seconds >= low)) return kMinTokenLifetime;  // also NaN
  if (seconds >= high) return kMaxTokenLifetime;
  return std::chrono::seconds(static_cast<int64_t>(seconds));
}

// Why `token` cannot go into an Authorization header, or "" when it can.
std::string UnsendableToken(const std::string& token) {
  if (token.size() > kMaxAccessTokenBytes) {
    return "an access_token of " + std::to_string(token.size()) + " bytes, over the " +
           FormatByteCap(kMaxAccessTokenBytes) + " imgmcp accepts";
  }
  for (char c : token) {
    if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e) {
      return "an access_token with characters an HTTP header cannot carry";
    }
  }
  return "";
}

// Fetch's wrapper: the request and its answer, errors prefixed with where the credential came
// from, and the request's `secrets` redacted from them.
Result<AccessToken> Exchange(const NetworkAccess& access, const std::string& url,
                             HttpRequest request, const std::string& origin,
                             const std::vector<std::string>& secrets, std::stop_token cancel,
                             std::chrono::steady_clock::time_point deadline) {
  const std::string who = "the token endpoint " + url;
  request.peer = who;
  request.max_answer_bytes = kMaxTokenAnswerBytes;
  auto answer = SendTo(access, url, std::move(request), cancel, deadline);
  if (!answer.ok()) {
    Error error = WithContext(answer.error(), "could not get an access token for " + origin);
    error.message = Redact(std::move(error.message), secrets);
    return error;
  }
  auto token = ParseTokenAnswer(*answer, who, secrets);
  if (!token.ok()) {
    Error error = WithContext(token.error(), origin);
    error.message = Redact(std::move(error.message), secrets);
    return error;
  }
  return token;
}

}  // namespace

Result<AccessToken> ParseTokenAnswer(const HttpAnswer& answer, const std::string& who,
                                     const std::vector<std::string>& secrets) {
  const Json json = Json::parse(answer.body, nullptr, /*allow_exceptions=*/false);
  // The endpoint's own words, redacted before they are cut to length: a cut secret would not be
  // recognised any more.
  auto quote = [&](const char* field, size_t limit) {
    std::string text = json[field].get<std::string>();
    RedactSecrets(text, secrets);
    return text.substr(0, limit);
  };
  if (answer.status != 200) {
    std::string why = "HTTP " + std::to_string(answer.status);
    if (json.is_object() && json.contains("error") && json["error"].is_string()) {
      why += " " + quote("error", 80);
      if (json.contains("error_description") && json["error_description"].is_string()) {
        why += ": " + quote("error_description", 200);
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
  if (const std::string why = UnsendableToken(token.token); !why.empty()) {
    return Error(ErrorCode::kFailedPrecondition,
                 who + " answered with " + why + "; it is not sent, and retrying will not help");
  }
  token.expires_in = TokenLifetime(json.contains("expires_in") ? json["expires_in"] : Json());
  return token;
}

namespace {

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
    return Exchange(access_, token_uri_, std::move(request), Describe(), {*jwt}, cancel, deadline);
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
    return Exchange(access_, token_uri_, std::move(request), Describe(), Secrets(), cancel,
                    deadline);
  }
  std::string Describe() const override { return "authorized_user from " + file_; }
  std::vector<std::string> Secrets() const override { return {refresh_token_, client_secret_}; }

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
    auto token = Exchange(access_, url, std::move(request), Describe(), {}, cancel, deadline);
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
  const std::string signing_input =
      Base64UrlEncode(header.dump()) + "." + Base64UrlEncode(claims.dump());
  if (sign == nullptr) return MakeError(ErrorCode::kInternal, "no signing function");
  ASSIGN_OR_RETURN(const std::string signature, sign(private_key_pem, signing_input));
  return signing_input + "." + Base64UrlEncode(signature);
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
