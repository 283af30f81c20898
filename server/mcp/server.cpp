#include "server/mcp/server.h"

#include <utility>

#include "server/mcp/connection.h"
#include "server/mcp/json_rpc.h"
#include "server/mcp/pagination.h"

namespace imgmcp::mcp {

namespace {
constexpr char kResourceCursorKind[] = "resources";
}  // namespace

McpServer::McpServer(ServerOptions options)
    : options_(std::move(options)),
      request_state_seal_(options_.request_state_key),
      pool_(options_.max_concurrent_calls) {}

McpServer::~McpServer() { pool_.Shutdown(); }

Status McpServer::RegisterTool(ToolSpec tool) { return tools_.Register(std::move(tool)); }

Status McpServer::RegisterTool(ToolDefinition definition, ToolHandler handler,
                               ToolAdmission admission) {
  return RegisterTool(
      MakeToolSpec(std::move(definition), std::move(handler), std::move(admission)));
}

Status McpServer::RegisterPrompt(PromptDefinition definition, PromptHandler handler) {
  return prompts_.Register(std::move(definition), std::move(handler));
}

void McpServer::SetCompletionHandler(CompletionHandler handler) {
  completion_ = std::move(handler);
}

void McpServer::AddResourceProvider(std::shared_ptr<ResourceProvider> provider) {
  if (provider) providers_.push_back(std::move(provider));
}

std::shared_ptr<Connection> McpServer::Connect(MessageSink& sink, ConnectionMode mode) {
  auto connection = std::make_shared<Connection>(*this, sink, mode);
  std::lock_guard<std::mutex> lock(connections_mu_);
  std::erase_if(connections_, [](const std::weak_ptr<Connection>& c) { return c.expired(); });
  connections_.push_back(connection);
  return connection;
}

std::vector<std::shared_ptr<Connection>> McpServer::LiveConnections() {
  std::vector<std::shared_ptr<Connection>> live;
  std::lock_guard<std::mutex> lock(connections_mu_);
  std::erase_if(connections_, [&live](const std::weak_ptr<Connection>& c) {
    auto strong = c.lock();
    if (!strong) return true;
    live.push_back(std::move(strong));
    return false;
  });
  return live;
}

ServerCapabilities McpServer::capabilities() const {
  ServerCapabilities caps;
  caps.prompts = !prompts_.empty();
  caps.completions = static_cast<bool>(completion_);
  return caps;
}

ServerIdentity McpServer::identity() const {
  return ServerIdentity{options_.name, options_.title, options_.version};
}

void McpServer::NotifyListChanged(ListKind list) {
  for (const auto& connection : LiveConnections()) connection->NotifyListChanged(list);
}

Result<ResourcePage> McpServer::ListResources(const std::optional<std::string>& cursor) {
  size_t index = 0;
  std::optional<std::string> inner;
  if (cursor) {
    auto payload = DecodeCursor(kResourceCursorKind, *cursor);
    if (!payload.ok()) return payload.error();
    Json position = Json::parse(payload.value(), nullptr, /*allow_exceptions=*/false);
    if (!position.is_object() || !position["p"].is_number_unsigned() ||
        position["p"].get<size_t>() >= providers_.size() || !position["c"].is_string()) {
      return MakeError(ErrorCode::kInvalidArgument, "Invalid cursor");
    }
    index = position["p"].get<size_t>();
    inner = position["c"].get<std::string>();
  }
  ResourcePage result;
  for (; index < providers_.size(); ++index, inner.reset()) {
    auto page = providers_[index]->List(inner);
    if (!page.ok()) return page.error();
    for (Json& resource : page->resources) result.resources.push_back(std::move(resource));
    if (page->next_cursor) {
      Json position = Json::object();
      position["p"] = index;
      position["c"] = *page->next_cursor;
      result.next_cursor = EncodeCursor(kResourceCursorKind, position.dump());
      break;
    }
  }
  return result;
}

Json McpServer::ListResourceTemplates() {
  Json templates = Json::array();
  for (const auto& provider : providers_) {
    Json mine = provider->Templates();
    if (!mine.is_array()) continue;
    for (Json& t : mine) templates.push_back(std::move(t));
  }
  return templates;
}

Result<Json> McpServer::ReadResource(const std::string& uri) {
  for (const auto& provider : providers_) {
    if (provider->Handles(uri)) return provider->Read(uri);
  }
  return ResourceNotFoundError(uri);
}

Error ResourceNotFoundError(const std::string& uri) {
  return MakeError(ErrorCode::kNotFound, "Resource not found: " + Quoted(uri));
}

bool McpServer::HandlesResource(const std::string& uri) const {
  for (const auto& provider : providers_) {
    if (provider->Handles(uri)) return true;
  }
  return false;
}

void McpServer::Notifier::ResourceUpdated(const std::string& uri) {
  for (const auto& connection : server_.LiveConnections()) connection->NotifyResourceUpdated(uri);
}

void McpServer::Notifier::ResourceListChanged() { server_.NotifyListChanged(ListKind::kResources); }

}  // namespace imgmcp::mcp
