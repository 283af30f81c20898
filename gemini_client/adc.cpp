#include "gemini_client/adc.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "gemini_client/oauth_sources.h"

namespace imgmcp::gemini {
namespace {

constexpr char kDefaultMetadataHost[] = "metadata.google.internal";
constexpr char kDefaultTokenUri[] = "https://oauth2.googleapis.com/token";
constexpr size_t kMaxCredentialFileBytes = 1 << 20;

Error FileError(const std::string& file, const std::string& found_by, const std::string& what) {
  return Error(ErrorCode::kFailedPrecondition,
               "the credential file " + file + " (" + found_by + ") " + what);
}

Result<Json> ReadJsonFile(const std::string& file, const std::string& found_by) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec) return FileError(file, found_by, "cannot be read: " + ec.message());
  if (size > kMaxCredentialFileBytes) return FileError(file, found_by, "is too large (over 1 MiB)");
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  if (!in || !(text << in.rdbuf())) return FileError(file, found_by, "cannot be read");
  Json json = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return FileError(file, found_by, "is not a JSON object (expected Google credentials JSON)");
  }
  return json;
}

// The string fields a credential type needs: each present and non-empty.
Status RequireFields(const AdcCredentials& c, std::initializer_list<const char*> fields) {
  for (const char* field : fields) {
    const auto it = c.json.find(field);
    if (it == c.json.end() || !it->is_string() || it->get<std::string>().empty()) {
      return FileError(c.file, c.found_by,
                       "is of type \"" + c.json.value("type", std::string()) + "\" but has no \"" +
                           field + "\" string");
    }
  }
  return Status::Ok();
}

Result<AdcCredentials> ReadCredentialFile(const std::string& file, const std::string& found_by) {
  AdcCredentials c;
  c.file = file;
  c.found_by = found_by;
  ASSIGN_OR_RETURN(c.json, ReadJsonFile(file, found_by));
  const auto type = c.json.find("type");
  if (type == c.json.end() || !type->is_string()) {
    return FileError(file, found_by, "has no \"type\" field (service_account or authorized_user)");
  }
  const std::string type_name = type->get<std::string>();
  if (type_name == "service_account") {
    c.kind = CredentialKind::kServiceAccount;
    RETURN_IF_ERROR(RequireFields(c, {"client_email", "private_key"}));
  } else if (type_name == "authorized_user") {
    c.kind = CredentialKind::kAuthorizedUser;
    RETURN_IF_ERROR(RequireFields(c, {"client_id", "client_secret", "refresh_token"}));
  } else {
    return FileError(file, found_by,
                     "is of type \"" + type_name.substr(0, 40) +
                         "\", which imgmcp does not support (service_account, authorized_user)");
  }
  if (!c.json.contains("token_uri")) c.json["token_uri"] = kDefaultTokenUri;
  if (!c.json["token_uri"].is_string() ||
      !ParseBaseUrl(c.json["token_uri"].get<std::string>()).ok()) {
    return FileError(file, found_by, "has a token_uri that is not an http(s) URL");
  }
  return c;
}

}  // namespace

std::string KindName(CredentialKind kind) {
  switch (kind) {
    case CredentialKind::kServiceAccount:
      return "service_account";
    case CredentialKind::kAuthorizedUser:
      return "authorized_user";
    case CredentialKind::kMetadataServer:
      return "metadata server";
  }
  return "";
}

std::string WellKnownCredentialsFile(const AdcEnvironment& env) {
  std::filesystem::path dir;
  if (!env.cloudsdk_config.empty()) {
    dir = env.cloudsdk_config;
  } else if (!env.home.empty()) {
    dir = std::filesystem::path(env.home) / ".config" / "gcloud";
  } else {
    return "";
  }
  return (dir / "application_default_credentials.json").string();
}

bool CredentialsConfigured(const AdcEnvironment& env) {
  std::error_code ec;
  const std::string well_known = WellKnownCredentialsFile(env);
  return !env.google_application_credentials.empty() || !env.gce_metadata_host.empty() ||
         (!well_known.empty() && std::filesystem::exists(well_known, ec));
}

Result<AdcCredentials> FindCredentials(const AdcEnvironment& env) {
  if (!env.google_application_credentials.empty()) {
    return ReadCredentialFile(env.google_application_credentials,
                              "named by GOOGLE_APPLICATION_CREDENTIALS");
  }
  const std::string well_known = WellKnownCredentialsFile(env);
  std::error_code ec;
  if (!well_known.empty() && std::filesystem::exists(well_known, ec)) {
    return ReadCredentialFile(well_known, "gcloud's application-default credentials");
  }
  AdcCredentials c;
  c.kind = CredentialKind::kMetadataServer;
  c.metadata_host = env.gce_metadata_host.empty() ? kDefaultMetadataHost : env.gce_metadata_host;
  return c;
}

std::unique_ptr<TokenSource> MakeTokenSource(const AdcCredentials& c, const NetworkAccess& access) {
  switch (c.kind) {
    case CredentialKind::kServiceAccount:
      return MakeServiceAccountSource(c, access);
    case CredentialKind::kAuthorizedUser:
      return MakeAuthorizedUserSource(c, access);
    case CredentialKind::kMetadataServer:
      break;
  }
  return MakeMetadataSource(c.metadata_host, access);
}

}  // namespace imgmcp::gemini
