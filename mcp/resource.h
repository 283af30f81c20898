// Resources as the protocol core sees them. server/tools implements ResourceProvider for
// imgmcp://sessions/...; the conformance fixtures implement one for test://...
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/result.h"
#include "mcp/caller.h"

namespace imgmcp::mcp {

struct ResourcePage {
  Json resources = Json::array();          // [{uri, name, title?, mimeType?, size?}]
  std::optional<std::string> next_cursor;  // opaque to the client
};

class ResourceProvider {
 public:
  virtual ~ResourceProvider() = default;
  // A page of the resources `caller` (caller.h) may see. An unknown or malformed cursor is
  // kInvalidArgument (→ -32602).
  virtual Result<ResourcePage> List(const Caller& caller,
                                    const std::optional<std::string>& cursor) = 0;
  // [{uriTemplate, name, title?, description?, mimeType?}]
  virtual Json Templates() = 0;
  // True when this provider serves `uri` (so the core knows whom to ask).
  virtual bool Handles(const std::string& uri) const = 0;
  // False when `caller` may not reach `uri`, served here, at all (a gallery link's bearer and
  // another session, caller.h): subscribing to it is refused as to a URI nobody serves.
  virtual bool Reaches(const Caller& /*caller*/, const std::string& /*uri*/) const { return true; }
  // The resources/read result for `caller`: {"contents":[{uri, mimeType, text|blob}]}.
  // kNotFound → -32002 (also for a resource that is someone else's).
  virtual Result<Json> Read(const Caller& caller, const std::string& uri) = 0;
};

// What a ResourceProvider's Read (or the core, for a URI nobody serves) returns for a resource that
// does not exist; resources/read answers it with ResourceNotFound (json_rpc.h).
Error ResourceNotFoundError(const std::string& uri);

// Lets a layer above the core tell subscribed clients that a resource changed
// (notifications/resources/updated) and that the list changed. Implemented by the core.
class ResourceNotifier {
 public:
  virtual ~ResourceNotifier() = default;
  // Tells the connections of `principal` (caller.h; "" the local one) subscribed to `uri`: a
  // session's resources are its owner's alone.
  virtual void ResourceUpdated(const std::string& uri, const std::string& principal) = 0;
  void ResourceUpdated(const std::string& uri) { ResourceUpdated(uri, std::string()); }
  // Tells the connections of `principal` that their resource list changed (one of their
  // sessions is new): another person's listing did not change.
  virtual void ResourceListChanged(const std::string& principal) = 0;
  void ResourceListChanged() { ResourceListChanged(std::string()); }
};

}  // namespace imgmcp::mcp
