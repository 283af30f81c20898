// Application Default Credentials, found in Google's order (docs/generation.md, "Vertex AI"):
// the file GOOGLE_APPLICATION_CREDENTIALS names, else gcloud's well-known file
// ($CLOUDSDK_CONFIG or ~/.config/gcloud, application_default_credentials.json, written by
// `gcloud auth application-default login`), else the metadata server (GCE_METADATA_HOST, else
// metadata.google.internal). Files are read and checked here; tokens come from the TokenSource
// MakeTokenSource builds (oauth_sources.h).
#pragma once

#include <memory>
#include <string>

#include "common/json.h"
#include "common/result.h"
#include "gemini_client/token_source.h"

namespace imgmcp::gemini {

struct AdcEnvironment {
  std::string google_application_credentials;  // GOOGLE_APPLICATION_CREDENTIALS
  std::string cloudsdk_config;                 // CLOUDSDK_CONFIG: gcloud's configuration dir
  std::string home;                            // HOME
  std::string gce_metadata_host;               // GCE_METADATA_HOST: host[:port]
};

enum class CredentialKind { kServiceAccount, kAuthorizedUser, kMetadataServer };

struct AdcCredentials {
  CredentialKind kind = CredentialKind::kMetadataServer;
  // Where they came from: the file (and which rule found it), or the metadata server's host.
  std::string file;           // "" for the metadata server
  std::string found_by;       // "GOOGLE_APPLICATION_CREDENTIALS", "gcloud's well-known file"
  std::string metadata_host;  // for kMetadataServer
  Json json;                  // the file's content (checked); never printed
};

// "service_account", "authorized_user", "metadata server".
std::string KindName(CredentialKind kind);

// gcloud's well-known file for `env` ("" when neither CLOUDSDK_CONFIG nor HOME is set).
std::string WellKnownCredentialsFile(const AdcEnvironment& env);

// True when a credential file is named or gcloud's file exists, or GCE_METADATA_HOST is set:
// what `--backend auto` takes for "credentials are configured" (it never probes the network).
bool CredentialsConfigured(const AdcEnvironment& env);

// Finds and checks the credentials. An unreadable file, one that is not JSON, of an unsupported
// type or missing a field is an error naming the file and what is wrong, never its content.
Result<AdcCredentials> FindCredentials(const AdcEnvironment& env);

// The token source for `credentials`; every request goes through `access`.
std::unique_ptr<TokenSource> MakeTokenSource(const AdcCredentials& credentials,
                                             const NetworkAccess& access);

}  // namespace imgmcp::gemini
