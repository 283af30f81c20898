// OAuthGate: what the Streamable HTTP transport does as an OAuth 2.1 resource server
// (HttpOptions::oauth; docs/security.md, "OAuth"). It answers the protected-resource metadata
// (RFC 9728), admits a request to /mcp only with an access token the ResourceServer accepts (401
// with a challenge naming the metadata otherwise), and refuses a message whose method or tool
// needs a scope the token lacks (403 insufficient_scope, so a client can step up). It also takes
// the token of a gallery link (mcp/gallery_links.h) in place of an access token: its principal
// has the read scope only and reaches one session. McpRoutes owns one when OAuth is on; it is
// thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/json.h"
#include "common/log.h"
#include "common/result.h"
#include "mcp/gallery_links.h"
#include "mcp/method_table.h"
#include "mcp/tool_registry.h"
#include "server/oauth/oauth_options.h"
#include "server/oauth/principal.h"
#include "server/oauth/resource_server.h"

namespace imgmcp::http {

// An answer refusing a request: its status, its WWW-Authenticate value and the message of its
// JSON-RPC error body.
struct AuthRefusal {
  int status = 401;
  std::string challenge;
  std::string message;
  bool token_refused = false;  // a bearer token was sent and refused (the audit trail keeps it)
};

// The scope a message needs (oauth::Access): kWrite for tasks/cancel, tasks/update and a
// tools/call that writes (a tool not marked read-only, or one given its writing_argument, e.g.
// get_image's save_to); kAny for the handshake, ping, discovery, logging levels, notifications
// and responses; kRead for everything else (listings, resources, prompts, reading tasks, calls of
// read-only tools).
oauth::Access AccessOf(const mcp::RequestFacts& facts, const Json& message,
                       const mcp::ToolRegistry& tools);

class OAuthGate {
 public:
  // `default_resource` is the listener's own /mcp URL, the resource when options name none.
  // `links` (may be null: no link opens) must outlive the gate.
  static Result<std::unique_ptr<OAuthGate>> Create(oauth::OAuthOptions options,
                                                   std::string default_resource,
                                                   mcp::GalleryLinks* links);

  // The metadata document when `path` is where it is served (/.well-known/
  // oauth-protected-resource, alone or followed by the resource's path); nullopt elsewhere.
  std::optional<std::string> MetadataAt(std::string_view path) const;

  // The principal of a request's Authorization header (may be empty), or the refusal: 401 with a
  // challenge, or 503 when an issuer's keys cannot be fetched. Refusals are logged (throttled)
  // without the token.
  std::variant<oauth::Principal, AuthRefusal> Admit(std::string_view authorization) const;

  // The 403 refusing the first of `messages` (the facts of a POST's messages, `body` the message
  // or the batch) that needs a scope `principal` lacks; nullopt when every one is allowed.
  std::optional<AuthRefusal> CheckScopes(const oauth::Principal& principal,
                                         const std::vector<mcp::RequestFacts>& messages,
                                         const Json& body, const mcp::ToolRegistry& tools) const;

  // Whose tasks a principal's requests reach: an opaque digest of (iss, sub); for a gallery
  // link's bearer, one of that link's session (which has no tasks: the link cannot write).
  static std::string OwnerOf(const oauth::Principal& principal);

 private:
  OAuthGate(std::unique_ptr<oauth::ResourceServer> server, mcp::GalleryLinks* links);
  // The principal of a gallery link's token, or the refusal.
  std::variant<oauth::Principal, AuthRefusal> AdmitLink(std::string_view token) const;
  AuthRefusal Refusal(const Error& error) const;

  std::unique_ptr<oauth::ResourceServer> server_;
  mcp::GalleryLinks* const links_;
  std::string metadata_path_;  // the path-suffixed metadata path of the resource
  std::string metadata_json_;
  mutable log::Throttle refused_log_{"refusals of an OAuth access token"};
};

}  // namespace imgmcp::http
