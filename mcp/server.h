// McpServer: what a server offers (tools, resources, prompts, completions, server info) and the
// shared machinery (worker pool, resource notifications). Transport-agnostic.
//
// Threading model
// - Start-up: construct McpServer, then Register*/AddResourceProvider/SetCompletionHandler from one
//   thread, before the first Connect(). Afterwards the registries are read-only and read without
//   locks.
// - A transport calls Connect(sink) once per client connection (stdio: once per process; HTTP: once
//   per Mcp-Session-Id) and feeds that Connection every incoming message, from any thread.
// - Cheap requests (initialize, ping, */list, logging/setLevel, subscribe) are answered on the
//   calling thread. tools/call, resources/read, prompts/get and completion/complete run on the
//   server's WorkerPool, so a slow call never blocks ping, cancellation or other sessions.
// - Outgoing messages go to the connection's MessageSink from whichever thread produced them.
// - Lifetime: McpServer outlives its connections and every transport using it. Its destructor
//   waits for running calls (cancel them first with Connection::CancelAll/Close).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/result.h"
#include "common/thread_annotations.h"
#include "mcp/audit_trail.h"
#include "mcp/call_limiter.h"
#include "mcp/connection.h"
#include "mcp/core_metrics.h"
#include "mcp/message_sink.h"
#include "mcp/prompt.h"
#include "mcp/protocol.h"
#include "mcp/request_state.h"
#include "mcp/resource.h"
#include "mcp/task_runner.h"
#include "mcp/task_watch.h"
#include "mcp/tool.h"
#include "mcp/tool_registry.h"
#include "mcp/worker_pool.h"

namespace imgmcp::mcp {

struct ServerOptions {
  std::string name = "imgmcp";  // serverInfo.name
  std::string title;            // serverInfo.title (omitted when empty)
  std::string version = "0.0.0";
  std::string instructions;  // initialize result "instructions" (omitted when empty)
  size_t page_size = 100;    // tools/list and prompts/list page size
  // Tool calls (and other worker-pool requests) running at once, over all connections. Beyond it a
  // request is answered with a -32603 "server busy" error.
  size_t max_concurrent_calls = 256;
  // How long a server→client request (ToolCallContext::SendRequest) waits for the client.
  std::chrono::milliseconds client_request_timeout{60000};
  // notifications/message threshold until the client sends logging/setLevel.
  LogLevel default_client_log_level = LogLevel::kInfo;
  // MAC key of MRTR requestState (request_state.h). Servers that share clients behind a load
  // balancer must share it; empty: a random key per process.
  std::string request_state_key;
  // Where answered requests are counted (mcp_server_operation_duration_seconds); nullptr: off.
  // Must outlive the server. Transports built on this server record into it too.
  CoreMetrics* metrics = nullptr;
  // Tasks (task_runner.h): how long a finished task stays readable and the suggested poll interval.
  TaskOptions tasks;
  // Changes to tasks made elsewhere (task_watch.h: another replica's), sent to the connections
  // listening for them like the runner's own, and waking the runner's WaitTerminal for them;
  // nullptr: only the runner's. Must outlive the server.
  TaskWatch* task_watch = nullptr;
  // Per-caller limits on tools/call (call_limiter.h); nullptr: none. Must outlive the server.
  CallLimiter* call_limiter = nullptr;
  // Where task cancels are recorded (audit_trail.h); nullptr: nowhere. Must outlive the server.
  AuditTrail* audit = nullptr;
};

class McpServer {
 public:
  explicit McpServer(ServerOptions options);
  ~McpServer();
  McpServer(const McpServer&) = delete;
  McpServer& operator=(const McpServer&) = delete;

  // --- registration (start-up only, before Connect) -----------------------------------------
  // A tool with typed arguments (see TypedTool in tool.h), or one already made into a ToolSpec.
  template <typename Args>
  Status RegisterTool(TypedTool<Args> tool) {
    return RegisterTool(MakeToolSpec(std::move(tool)));
  }
  Status RegisterTool(ToolSpec tool);
  // A tool taking raw JSON arguments. `admission` (optional) runs when a call arrives, in arrival
  // order; see tool.h.
  Status RegisterTool(ToolDefinition definition, ToolHandler handler, ToolAdmission admission = {});
  Status RegisterPrompt(PromptDefinition definition, PromptHandler handler);
  void SetCompletionHandler(CompletionHandler handler);
  // Providers are asked in the order added; resources/list pages through them in that order.
  void AddResourceProvider(std::shared_ptr<ResourceProvider> provider);
  // Tells subscribed clients of every connection that a resource (or the list) changed. Valid for
  // the server's lifetime; thread-safe.
  ResourceNotifier& resource_notifier() { return notifier_; }

  // --- transports -----------------------------------------------------------------------------
  // A new client connection whose outgoing messages go to `sink`. `sink` must stay valid until
  // Connection::Close() returns (the connection never touches it afterwards).
  std::shared_ptr<Connection> Connect(MessageSink& sink,
                                      ConnectionMode mode = ConnectionMode::kDual);
  // Tells the connections listening for it that the tools or prompts list changed (resources:
  // resource_notifier().ResourceListChanged()). Thread-safe.
  void NotifyListChanged(ListKind list);

  // --- read access for the core -----------------------------------------------------------------
  const ServerOptions& options() const { return options_; }
  const ToolRegistry& tools() const { return tools_; }
  const PromptRegistry& prompts() const { return prompts_; }
  const CompletionHandler& completion_handler() const { return completion_; }
  WorkerPool& pool() { return pool_; }
  TaskRunner& tasks() { return tasks_; }
  const RequestStateSeal& request_state_seal() const { return request_state_seal_; }
  // What initialize and server/discover declare.
  ServerCapabilities capabilities() const;
  ServerIdentity identity() const;
  // resources/list across providers. Bad cursor → kInvalidArgument.
  Result<ResourcePage> ListResources(const Caller& caller,
                                     const std::optional<std::string>& cursor);
  // resources/templates/list: every provider's templates.
  Json ListResourceTemplates();
  // resources/read: the provider's result; kNotFound when no provider serves `uri`.
  Result<Json> ReadResource(const Caller& caller, const std::string& uri);
  // True when some resource provider serves URIs of this form (the resource may not exist yet).
  bool HandlesResource(const std::string& uri) const;
  // HandlesResource, and the provider lets `caller` reach it (ResourceProvider::Reaches).
  bool ReachesResource(const Caller& caller, const std::string& uri) const;

 private:
  class Notifier final : public ResourceNotifier {
   public:
    explicit Notifier(McpServer& server) : server_(server) {}
    using ResourceNotifier::ResourceUpdated;
    void ResourceUpdated(const std::string& uri, const std::string& principal) override;
    using ResourceNotifier::ResourceListChanged;
    void ResourceListChanged(const std::string& principal) override;

   private:
    McpServer& server_;
  };

  // Live connections (expired ones are pruned as they are met).
  std::vector<std::shared_ptr<Connection>> LiveConnections();
  // A task changed elsewhere (options_.task_watch). The runner's waiters for it are woken.
  // Cancelled: the runner stops it if it runs it here (its call is woken, its turn given back).
  // Then the connections listening for it are told; the row is read only when one does.
  void OnWatchedTask(const TaskWatch::Change& change, const TaskWatch::Reader& read);

  const ServerOptions options_;
  ToolRegistry tools_;
  PromptRegistry prompts_;
  CompletionHandler completion_;
  const RequestStateSeal request_state_seal_;
  std::vector<std::shared_ptr<ResourceProvider>> providers_;
  Notifier notifier_{*this};
  Mutex connections_mu_;  // guards connections_
  std::vector<std::weak_ptr<Connection>> connections_ GUARDED_BY(connections_mu_);
  WorkerPool pool_;                   // destroyed (joined) before everything above
  TaskRunner tasks_{options_.tasks};  // last: its own pool is joined first
};

}  // namespace imgmcp::mcp
