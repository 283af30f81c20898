#include "mcp/server.h"

#include <optional>
#include <string_view>
#include <utility>

#include "common/decimal.h"
#include "mcp/connection.h"
#include "mcp/json_rpc.h"
#include "mcp/pagination.h"

namespace imgmcp::mcp {

namespace {
constexpr char kResourceCursorKind[] = "resources";

// The runner hears of changes made elsewhere exactly when there is a watch (OnWatchedTask).
ServerOptions WithWatchedTasks(ServerOptions options) {
  options.tasks.changes_elsewhere_reported = options.task_watch != nullptr;
  return options;
}
}  // namespace

McpServer::McpServer(ServerOptions options)
    : options_(WithWatchedTasks(std::move(options))),
      request_state_seal_(options_.request_state_key),
      pool_(options_.max_concurrent_calls) {
  tasks_.OnChange([this](const TaskSnapshot& task) {
    for (const auto& connection : LiveConnections()) connection->NotifyTask(task);
  });
  if (options_.task_watch != nullptr) {
    options_.task_watch->SetListener(
        [this](const TaskWatch::Change& change, const TaskWatch::Reader& read) {
          OnWatchedTask(change, read);
        });
  }
}

McpServer::~McpServer() {
  if (options_.task_watch != nullptr) options_.task_watch->SetListener(nullptr);
  tasks_.Shutdown("the server shut down before this task finished; nothing was committed");
  pool_.Shutdown();
}

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
  MutexLock lock(connections_mu_);
  std::erase_if(connections_, [](const std::weak_ptr<Connection>& c) { return c.expired(); });
  connections_.push_back(connection);
  return connection;
}

std::vector<std::shared_ptr<Connection>> McpServer::LiveConnections() {
  std::vector<std::shared_ptr<Connection>> live;
  MutexLock lock(connections_mu_);
  std::erase_if(connections_, [&live](const std::weak_ptr<Connection>& c) {
    auto strong = c.lock();
    if (!strong) return true;
    live.push_back(std::move(strong));
    return false;
  });
  return live;
}

// The runner's waiters for the task are woken (they read the row themselves), and the row is read
// once, for all the connections listening. A change the runner made here never
// comes through the watch (session_store.h TaskChange), and one that does is a whole task state
// again, which a listener may receive twice without harm (the extension's notifications carry the
// full task, mcp-2026-07-28 extension_tasks_overview "Notifications").
void McpServer::OnWatchedTask(const TaskWatch::Change& change, const TaskWatch::Reader& read) {
  tasks_.NoteChangedElsewhere(change.task_id);  // wakes tasks/result waiting for it
  // Another replica cancelled it (tasks/cancel there): if it runs here, Cancel stops it now (and
  // tells this process's listeners); otherwise it finds the row terminal and leaves it.
  if (change.state == TaskState::kCancelled) (void)tasks_.Cancel(change.task_id, change.owner);
  std::vector<std::shared_ptr<Connection>> listening;
  for (auto& connection : LiveConnections()) {
    if (connection->ListensForTask(change.task_id)) listening.push_back(std::move(connection));
  }
  if (listening.empty()) return;
  std::optional<TaskSnapshot> task = read();
  if (!task) return;
  for (const auto& connection : listening) connection->NotifyTask(*task);
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

namespace {

// A resources/list position: "<provider index>:<that provider's cursor>". A fixed shape, read
// without a parser (the cursor is the client's to send back, DecodeCursor has bounded its size).
std::string EncodeResourcePosition(size_t provider, const std::string& inner) {
  return std::to_string(provider) + ":" + inner;
}

bool DecodeResourcePosition(std::string_view payload, size_t providers, size_t* provider,
                            std::string* inner) {
  const size_t colon = payload.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  const std::optional<size_t> index = ParseDecimal<size_t>(payload.substr(0, colon));
  if (!index || *index >= providers) return false;
  *provider = *index;
  *inner = std::string(payload.substr(colon + 1));
  return !inner->empty();
}

}  // namespace

Result<ResourcePage> McpServer::ListResources(const Caller& caller,
                                              const std::optional<std::string>& cursor) {
  size_t index = 0;
  std::optional<std::string> inner;
  if (cursor) {
    ASSIGN_OR_RETURN(const std::string payload, DecodeCursor(kResourceCursorKind, *cursor));
    std::string position;
    if (!DecodeResourcePosition(payload, providers_.size(), &index, &position)) {
      return MakeError(ErrorCode::kInvalidArgument, "Invalid cursor");
    }
    inner = std::move(position);
  }
  ResourcePage result;
  for (; index < providers_.size(); ++index, inner.reset()) {
    ASSIGN_OR_RETURN(ResourcePage page, providers_[index]->List(caller, inner));
    for (Json& resource : page.resources) result.resources.push_back(std::move(resource));
    if (page.next_cursor) {
      result.next_cursor =
          EncodeCursor(kResourceCursorKind, EncodeResourcePosition(index, *page.next_cursor));
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

Result<Json> McpServer::ReadResource(const Caller& caller, const std::string& uri) {
  for (const auto& provider : providers_) {
    if (provider->Handles(uri)) return provider->Read(caller, uri);
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

bool McpServer::ReachesResource(const Caller& caller, const std::string& uri) const {
  for (const auto& provider : providers_) {
    if (provider->Handles(uri)) return provider->Reaches(caller, uri);
  }
  return false;
}

void McpServer::Notifier::ResourceUpdated(const std::string& uri, const std::string& principal) {
  for (const auto& connection : server_.LiveConnections()) {
    connection->NotifyResourceUpdated(uri, principal);
  }
}

void McpServer::Notifier::ResourceListChanged(const std::string& principal) {
  for (const auto& connection : server_.LiveConnections()) {
    // A gallery link's bearer sees one session: the list it cannot read did not change for it.
    if (connection->caller_principal() == principal && !connection->caller_reaches_one_session()) {
      connection->NotifyListChanged(ListKind::kResources);
    }
  }
}

}  // namespace imgmcp::mcp
