#include "tests/fake_gemini/fake_oauth.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

#include "common/base64.h"

namespace imgmcp::fake_gemini {
namespace {

std::map<std::string, std::string> ParseForm(const std::string& body) {
  std::map<std::string, std::string> out;
  auto decode = [](const std::string& s) {
    std::string r;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '+') {
        r += ' ';
      } else if (s[i] == '%' && i + 2 < s.size()) {
        r += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        r += s[i];
      }
    }
    return r;
  };
  std::stringstream in(body);
  std::string pair;
  while (std::getline(in, pair, '&')) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos) continue;
    out[decode(pair.substr(0, eq))] = decode(pair.substr(eq + 1));
  }
  return out;
}

Result<std::string> Base64UrlDecode(std::string s) {
  for (char& c : s) {
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  return Base64Decode(s);
}

bool VerifyRs256(const std::string& public_key_pem, const std::string& data,
                 const std::string& signature) {
  BIO* bio = BIO_new_mem_buf(public_key_pem.data(), static_cast<int>(public_key_pem.size()));
  EVP_PKEY* key = bio ? PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr) : nullptr;
  BIO_free(bio);
  if (key == nullptr) return false;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const bool ok =
      ctx != nullptr && EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
      EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(signature.data()),
                       signature.size(), reinterpret_cast<const unsigned char*>(data.data()),
                       data.size()) == 1;
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  return ok;
}

}  // namespace

void FakeOAuth::SetTokenUri(std::string token_uri) {
  std::lock_guard<std::mutex> lock(mutex_);
  token_uri_ = std::move(token_uri);
}

Status FakeOAuth::Configure(const Json& config) {
  if (!config.is_object()) return MakeError(ErrorCode::kInvalidArgument, "oauth config: object");
  std::lock_guard<std::mutex> lock(mutex_);
  FakeOAuthSettings next = settings_;
  for (const auto& [key, value] : config.items()) {
    if (key == "public_key_file" && value.is_string()) {
      std::ifstream in(value.get<std::string>());
      std::ostringstream text;
      if (!in || !(text << in.rdbuf())) {
        return MakeError(ErrorCode::kInvalidArgument, "cannot read " + value.get<std::string>());
      }
      next.public_key_pem = text.str();
    } else if (key == "client_email" && value.is_string()) {
      next.client_email = value;
    } else if (key == "client_id" && value.is_string()) {
      next.client_id = value;
    } else if (key == "client_secret" && value.is_string()) {
      next.client_secret = value;
    } else if (key == "refresh_token" && value.is_string()) {
      next.refresh_token = value;
    } else if (key == "token_lifetime_s" && value.is_number_integer()) {
      next.token_lifetime_s = value;
    } else if (key == "metadata" && value.is_boolean()) {
      next.metadata = value;
    } else if (key == "expires_in" && value.is_number()) {
      next.expires_in = value;
    } else if (key == "access_token_bytes" && value.is_number_integer() &&
               value.get<int64_t>() >= 0 && value.get<int64_t>() <= (int64_t{256} << 20)) {
      next.access_token_bytes = value;
    } else if (key == "echo_request" && value.is_boolean()) {
      next.echo_request = value;
    } else if (key == "hold" && value.is_string()) {
      next.hold = value;
    } else {
      return MakeError(ErrorCode::kInvalidArgument,
                       "oauth config field \"" + key + "\" is unknown or has the wrong type");
    }
  }
  settings_ = std::move(next);
  return Status::Ok();
}

void FakeOAuth::Reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  settings_ = FakeOAuthSettings{};
  tokens_.clear();
  requests_.clear();
}

void FakeOAuth::ExpireTokens() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [token, expiry] : tokens_) expiry = std::chrono::steady_clock::time_point::min();
}

Json FakeOAuth::TokenRequests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return Json(requests_);
}

bool FakeOAuth::Valid(const std::string& token) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = tokens_.find(token);
  return it != tokens_.end() && std::chrono::steady_clock::now() < it->second;
}

std::string FakeOAuth::HoldGate() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return settings_.hold;
}

std::pair<int, std::string> FakeOAuth::Issue(const std::string& kind, const Json& claims) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard<std::mutex> lock(mutex_);
  std::ostringstream out;
  out << "ya29.fake-" << ++serial_ << "-" << std::hex << rng() << rng();
  std::string token = out.str();
  if (settings_.access_token_bytes > 0) {
    token.resize(std::max<size_t>(token.size(), settings_.access_token_bytes), 'A');
  }
  tokens_[token] =
      std::chrono::steady_clock::now() + std::chrono::seconds(settings_.token_lifetime_s);
  requests_.push_back(
      {{"kind", kind}, {"ok", true}, {"error", nullptr}, {"claims", claims}, {"token", token}});
  const Json body = {
      {"access_token", token},
      {"expires_in",
       settings_.expires_in.is_null() ? Json(settings_.token_lifetime_s) : settings_.expires_in},
      {"token_type", "Bearer"}};
  return {200, body.dump()};
}

std::pair<int, std::string> FakeOAuth::Refuse(const std::string& kind, int status,
                                              const std::string& error,
                                              const std::string& description) {
  std::lock_guard<std::mutex> lock(mutex_);
  requests_.push_back(
      {{"kind", kind}, {"ok", false}, {"error", error + ": " + description}, {"claims", nullptr}});
  return {status, Json({{"error", error}, {"error_description", description}}).dump()};
}

// "" when the JWT is good; else why not. Fills `claims`.
std::string FakeOAuth::VerifyJwt(const std::string& jwt, const FakeOAuthSettings& settings,
                                 Json* claims) const {
  const size_t dot1 = jwt.find('.');
  const size_t dot2 = jwt.find('.', dot1 == std::string::npos ? 0 : dot1 + 1);
  if (dot1 == std::string::npos || dot2 == std::string::npos) return "not a JWT";
  auto header = Base64UrlDecode(jwt.substr(0, dot1));
  auto payload = Base64UrlDecode(jwt.substr(dot1 + 1, dot2 - dot1 - 1));
  auto signature = Base64UrlDecode(jwt.substr(dot2 + 1));
  if (!header.ok() || !payload.ok() || !signature.ok()) return "bad base64url";
  const Json h = Json::parse(*header, nullptr, false);
  *claims = Json::parse(*payload, nullptr, false);
  if (!h.is_object() || h.value("alg", "") != "RS256") return "alg is not RS256";
  if (!claims->is_object()) return "claims are not JSON";
  if (!VerifyRs256(settings.public_key_pem, jwt.substr(0, dot2), *signature)) {
    return "Invalid JWT Signature.";
  }
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  if (claims->value("iss", "") != settings.client_email) return "iss is not the service account";
  if (claims->value("scope", "").find("https://www.googleapis.com/auth/cloud-platform") ==
      std::string::npos) {
    return "scope lacks cloud-platform";
  }
  if (claims->value("aud", "") != token_uri_) return "aud is not " + token_uri_;
  const int64_t iat = claims->value("iat", int64_t{0});
  const int64_t exp = claims->value("exp", int64_t{0});
  if (iat > now + 60 || exp <= now || exp - iat > 3600) return "Invalid iat/exp";
  return "";
}

std::pair<int, std::string> FakeOAuth::HandleToken(const std::string& form_body) {
  const auto form = ParseForm(form_body);
  FakeOAuthSettings settings;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    settings = settings_;
  }
  const auto field = [&](const char* name) {
    const auto it = form.find(name);
    return it == form.end() ? std::string() : it->second;
  };
  const std::string grant = field("grant_type");
  if (settings.echo_request) {
    // What a careless endpoint or proxy does: quote the request's credentials, decoded, first.
    std::string echo;
    for (const char* name : {"refresh_token", "client_secret", "assertion", "client_id"}) {
      if (form.count(name) > 0)
        echo += std::string(echo.empty() ? "" : ", ") + name + "=" + field(name);
    }
    return Refuse(grant == "refresh_token" ? "refresh" : "jwt", 400, "invalid_request",
                  "the request was: " + echo);
  }
  if (grant == "urn:ietf:params:oauth:grant-type:jwt-bearer") {
    Json claims;
    std::string why;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      why = VerifyJwt(field("assertion"), settings, &claims);
    }
    if (!why.empty()) return Refuse("jwt", 400, "invalid_grant", why);
    return Issue("jwt", claims);
  }
  if (grant == "refresh_token") {
    if (settings.refresh_token.empty() || field("refresh_token") != settings.refresh_token ||
        field("client_id") != settings.client_id ||
        field("client_secret") != settings.client_secret) {
      return Refuse("refresh", 400, "invalid_grant", "Bad Request");
    }
    return Issue("refresh", nullptr);
  }
  return Refuse("unknown", 400, "unsupported_grant_type", "Invalid grant_type");
}

std::pair<int, std::string> FakeOAuth::HandleMetadata(bool flavor_header) {
  bool enabled;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    enabled = settings_.metadata;
  }
  if (!enabled) return Refuse("metadata", 404, "not_found", "no service account");
  if (!flavor_header) return Refuse("metadata", 403, "forbidden", "Missing Metadata-Flavor");
  return Issue("metadata", nullptr);
}

}  // namespace imgmcp::fake_gemini
