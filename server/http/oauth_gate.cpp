#include "server/http/oauth_gate.h"

#include <utility>

#include "common/sha256.h"
#include "mcp/protocol.h"
#include "mcp/task_json.h"
#include "server/http/log_tag.h"

namespace imgmcp::http {

namespace {

constexpr std::string_view kMetadataRoot = "/.well-known/oauth-protected-resource";

// The path of a URL ("http://h:1/a/b" → "/a/b"; "" when it has none).
std::string_view PathOf(std::string_view url) {
  const size_t scheme = url.find("://");
  const size_t slash = url.find('/', scheme == std::string_view::npos ? 0 : scheme + 3);
  return slash == std::string_view::npos ? std::string_view() : url.substr(slash);
}

bool ToolCallWrites(const Json& message, const std::string& name, const mcp::ToolRegistry& tools) {
  const mcp::ToolSpec* tool = tools.Find(name);
  if (tool == nullptr) return false;  // the core answers "unknown tool"; nothing runs
  const mcp::ToolDefinition& definition = tool->definition;
  if (!definition.annotations.read_only.value_or(false)) return true;
  if (definition.writing_argument.empty()) return false;
  const auto params = message.find("params");
  if (params == message.end() || !params->is_object()) return false;
  const auto arguments = params->find("arguments");
  if (arguments == params->end() || !arguments->is_object()) return false;
  const auto argument = arguments->find(definition.writing_argument);
  return argument != arguments->end() && !argument->is_null();
}

}  // namespace

oauth::Access AccessOf(const mcp::RequestFacts& facts, const Json& message,
                       const mcp::ToolRegistry& tools) {
  using Kind = mcp::IncomingMessage::Kind;
  if (facts.kind != Kind::kRequest) return oauth::Access::kAny;  // notifications, responses
  const std::string& method = facts.method;
  namespace m = mcp::methods;
  if (method == m::kInitialize || method == m::kPing || method == m::kDiscover ||
      method == m::kSetLevel) {
    return oauth::Access::kAny;
  }
  if (method == m::kTasksCancel || method == m::kTasksUpdate) return oauth::Access::kWrite;
  if (method == m::kToolsCall && facts.name && ToolCallWrites(message, *facts.name, tools)) {
    return oauth::Access::kWrite;
  }
  return oauth::Access::kRead;
}

OAuthGate::OAuthGate(std::unique_ptr<oauth::ResourceServer> server, mcp::GalleryLinks* links)
    : server_(std::move(server)),
      links_(links),
      metadata_path_(PathOf(server_->metadata_url())),
      metadata_json_(server_->MetadataJson()) {}

Result<std::unique_ptr<OAuthGate>> OAuthGate::Create(oauth::OAuthOptions options,
                                                     std::string default_resource,
                                                     mcp::GalleryLinks* links) {
  ASSIGN_OR_RETURN(auto server,
                   oauth::ResourceServer::Create(std::move(options), std::move(default_resource)));
  log::Info(kLog, "OAuth: accepting access tokens for " + server->resource() +
                      "; protected-resource metadata at " + server->metadata_url());
  return std::unique_ptr<OAuthGate>(new OAuthGate(std::move(server), links));
}

std::optional<std::string> OAuthGate::MetadataAt(std::string_view path) const {
  if (path == kMetadataRoot || path == metadata_path_) return metadata_json_;
  return std::nullopt;
}

std::variant<oauth::Principal, AuthRefusal> OAuthGate::Admit(std::string_view authorization) const {
  if (links_ != nullptr) {
    const Result<std::string_view> token = oauth::BearerToken(authorization);
    if (token.ok() && token->starts_with(mcp::kGalleryLinkTokenPrefix)) return AdmitLink(*token);
  }
  Result<oauth::Principal> principal = server_->Authenticate(authorization);
  if (principal.ok()) return std::move(principal).value();
  return Refusal(principal.error());
}

std::variant<oauth::Principal, AuthRefusal> OAuthGate::AdmitLink(std::string_view token) const {
  Result<mcp::GalleryGrant> grant = links_->Open(token);
  if (!grant.ok()) {
    // An expired or altered link is a refused token; a key the store cannot give now, a 503.
    Error error = grant.error();
    if (error.code != ErrorCode::kUnavailable) error.code = ErrorCode::kPermissionDenied;
    return Refusal(error);
  }
  oauth::Principal principal;
  principal.key = std::move(grant->principal);
  principal.only_session = std::move(grant->session_id);
  principal.client_id = "gallery link";
  principal.scopes = {server_->ScopeFor(oauth::Access::kRead)};
  return principal;
}

AuthRefusal OAuthGate::Refusal(const Error& error) const {
  AuthRefusal refusal;
  if (error.code == ErrorCode::kUnavailable) {
    refusal.status = 503;
    refusal.message =
        "Service Unavailable: the access token cannot be checked now: " + error.message;
  } else if (error.code == ErrorCode::kInvalidArgument) {  // no bearer token at all
    refusal.challenge = server_->Challenge();
    refusal.message = "Unauthorized: " + error.message;
  } else {
    refusal.challenge = server_->Challenge(error.message);
    refusal.message = "Unauthorized: the access token was refused: " + error.message;
    refusal.token_refused = true;
  }
  refused_log_.Write(log::Level::kWarning, kLog, "refused a request: " + refusal.message);
  return refusal;
}

std::optional<AuthRefusal> OAuthGate::CheckScopes(const oauth::Principal& principal,
                                                  const std::vector<mcp::RequestFacts>& messages,
                                                  const Json& body,
                                                  const mcp::ToolRegistry& tools) const {
  for (size_t i = 0; i < messages.size(); ++i) {
    const Json& message = body.is_array() ? body.at(i) : body;
    const oauth::Access access = AccessOf(messages[i], message, tools);
    if (server_->Allows(principal, access)) continue;
    AuthRefusal refusal;
    refusal.status = 403;
    refusal.challenge = server_->InsufficientScope(access);
    refusal.message = "Forbidden: " + messages[i].method + " needs the scope " +
                      server_->ScopeFor(access) + ", which the access token was not granted";
    refused_log_.Write(log::Level::kWarning, kLog,
                       "refused a request of " + principal.client_id + ": " + refusal.message);
    return refusal;
  }
  return std::nullopt;
}

std::string OAuthGate::OwnerOf(const oauth::Principal& principal) {
  if (principal.only_session.empty()) return principal.key;
  return Sha256Hex("imgmcp gallery link owner\n" + principal.key + "\n" + principal.only_session);
}

}  // namespace imgmcp::http
