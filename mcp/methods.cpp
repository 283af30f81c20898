// The core's one method table, and the methods it names: every request and notification the
// core knows, the eras it exists in, how it is answered, and its handler (method_handlers.h:
// typed params in, a result or an error out). Dispatch is in connection.cpp; the tasks methods'
// handlers are in task_methods.cpp and legacy_task_methods.cpp, tools/call's run in
// tool_call.cpp.
#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "common/log.h"
#include "mcp/connection.h"
#include "mcp/legacy_task_json.h"
#include "mcp/log_tag.h"
#include "mcp/method_handlers.h"
#include "mcp/server.h"

namespace imgmcp::mcp {

namespace {

// Lists that are the same for every caller and change only with a new build or configuration.
constexpr CachePolicy kStableList{300'000, /*public_scope=*/true};
// Sessions' resources: they change with every new version, and they are the caller's data.
constexpr CachePolicy kSessionData{0, /*public_scope=*/false};

// A handler taking typed params, as the table's MethodHandler: the params are parsed strictly
// first (an error names the field).
template <typename Params, Outcome (*Handle)(Connection&, RequestScope&, const Params&)>
Outcome Typed(Connection& c, RequestScope& scope, const Json& params) {
  Result<Params> parsed = Params::FromJson(params, scope.method->name);
  if (!parsed.ok()) return Outcome::Fail(InvalidParams(parsed.error().message));
  return Handle(c, scope, parsed.value());
}

// Tasks: the extension (modern; its callers must declare it) and the 2025-11-25 utility (legacy
// sessions that negotiated that version; tasks/result and tasks/list are its own).
void AddTaskMethods(std::vector<MethodSpec>& table) {
  using namespace handlers;  // NOLINT(google-build-using-namespace): the table names them all
  const MethodSpec tasks[] = {
      {{.name = methods::kTasksGet, .legacy = true, .modern = true, .name_param = "taskId"},
       &Typed<TaskIdParams, &GetTask>},
      {{.name = methods::kTasksUpdate, .modern = true, .name_param = "taskId"},
       &Typed<TaskUpdateParams, &UpdateTask>},
      {{.name = methods::kTasksCancel, .legacy = true, .modern = true, .name_param = "taskId"},
       &Typed<TaskIdParams, &CancelTask>},
      // Waits on a worker for the task to end: an HTTP POST streams meanwhile. No Mcp-Name: a
      // modern request for it is refused as unknown before any header is checked.
      {{.name = methods::kTasksResult, .legacy = true, .streams = true},
       &Typed<TaskIdParams, &TaskResult>},
      {{.name = methods::kTasksList, .legacy = true}, &Typed<ListParams, &ListTasks>},
  };
  table.insert(table.end(), std::begin(tasks), std::end(tasks));
}

// The method table: every method, its facts and its handler.
std::vector<MethodSpec> MakeTable() {
  using namespace handlers;  // NOLINT(google-build-using-namespace): the table names them all
  std::vector<MethodSpec> table = {
      // Legacy lifecycle and session state.
      {{.name = methods::kInitialize, .legacy = true, .before_initialize = true},
       &Typed<InitializeParams, &Initialize>},
      {{.name = methods::kPing, .legacy = true, .before_initialize = true},
       &Typed<NoParams, &Ping>},
      {{.name = methods::kSetLevel, .legacy = true}, &Typed<SetLevelParams, &SetLogLevel>},
      {{.name = methods::kResourcesSubscribe, .legacy = true}, &Typed<UriParams, &Subscribe>},
      {{.name = methods::kResourcesUnsubscribe, .legacy = true}, &Typed<UriParams, &Unsubscribe>},
      // Modern discovery and change notifications.
      {{.name = methods::kDiscover, .modern = true, .cache = kStableList},
       &Typed<NoParams, &Discover>},
      // Answered later: the stream stays open until the client ends it.
      {{.name = methods::kListen, .modern = true, .streams = true, .long_lived = true},
       &Typed<ListenParams, &Listen>},
      // Both eras.
      {{.name = methods::kToolsList, .legacy = true, .modern = true, .cache = kStableList},
       &Typed<ListParams, &ListTools>},
      // Admitted on the calling thread (arrival order), run on a worker.
      {{.name = methods::kToolsCall,
        .legacy = true,
        .modern = true,
        .streams = true,
        .name_param = "name"},
       &Typed<CallToolParams, &CallTool>},
      {{.name = methods::kResourcesList,
        .legacy = true,
        .modern = true,
        .inline_answer = false,
        .cache = kSessionData},
       &Typed<ListParams, &ListResources>},
      {{.name = methods::kResourceTemplatesList,
        .legacy = true,
        .modern = true,
        .cache = kStableList},
       &Typed<ListParams, &ListResourceTemplates>},
      {{.name = methods::kResourcesRead,
        .legacy = true,
        .modern = true,
        .inline_answer = false,
        .cache = kSessionData,
        .name_param = "uri"},
       &Typed<UriParams, &ReadResource>},
      {{.name = methods::kPromptsList,
        .legacy = true,
        .modern = true,
        .cache = kStableList,
        .capability = &ServerCapabilities::prompts},
       &Typed<ListParams, &ListPrompts>},
      {{.name = methods::kPromptsGet,
        .legacy = true,
        .modern = true,
        .inline_answer = false,
        .name_param = "name",
        .capability = &ServerCapabilities::prompts},
       &Typed<GetPromptParams, &GetPrompt>},
      {{.name = methods::kComplete,
        .legacy = true,
        .modern = true,
        .inline_answer = false,
        .capability = &ServerCapabilities::completions},
       &Typed<CompleteParams, &Complete>},
      // Notifications.
      {{.name = methods::kCancelled, .legacy = true, .modern = true, .notification = true},
       &Typed<CancelledParams, &Cancelled>},
      {{.name = methods::kInitialized, .legacy = true, .notification = true},
       &Typed<NoParams, &Initialized>},
  };
  AddTaskMethods(table);
  return table;
}

}  // namespace

const MethodSpec* FindMethodSpec(std::string_view name) {
  static const std::vector<MethodSpec> kTable = MakeTable();
  auto it = std::find_if(kTable.begin(), kTable.end(),
                         [name](const MethodSpec& spec) { return spec.info.name == name; });
  return it == kTable.end() ? nullptr : &*it;
}

const MethodInfo* FindMethod(std::string_view name) {
  const MethodSpec* spec = FindMethodSpec(name);
  return spec == nullptr ? nullptr : &spec->info;
}

namespace handlers {

// --- legacy lifecycle and session state ---------------------------------------------------------

Outcome Initialize(Connection& c, RequestScope&, const InitializeParams& params) {
  const McpServer& server = c.server();
  const std::string version = NegotiateProtocolVersion(params.protocol_version);
  if (!c.session().Open(version, params.capabilities)) {
    return Outcome::Fail(InvalidRequest("server already initialized"));
  }
  auto info_field = [&params](const char* key) {
    const Json& info = params.client_info;
    if (!info.is_object() || !info.contains(key)) return std::string("?");
    const Json& v = info[key];
    return v.is_string() ? v.get<std::string>() : v.dump();
  };
  log::Info(kLog, "initialize from " + info_field("name") + " " + info_field("version") +
                      ": requested \"" + params.protocol_version + "\", speaking " + version);
  Json result = InitializeResult(version, server.capabilities(), server.identity(),
                                 server.options().instructions);
  if (HasTasksUtility(version) && server.tools().AnyTaskSupport()) {
    result["capabilities"]["tasks"] = TasksUtilityCapability();
  }
  return Outcome::Of(std::move(result));
}

Outcome Ping(Connection&, RequestScope&, const NoParams&) { return Outcome::Of(EmptyResult()); }

Outcome SetLogLevel(Connection& c, RequestScope&, const SetLevelParams& params) {
  c.session().SetLogLevel(params.level);
  return Outcome::Of(EmptyResult());
}

Outcome Subscribe(Connection& c, RequestScope& scope, const UriParams& params) {
  // A URI no provider could ever serve (or not to this caller) is refused, not silently watched
  // forever.
  if (!c.server().ReachesResource(scope.caller, params.uri)) {
    return Outcome::Fail(InvalidParams("Unknown resource URI: " + Json(Quoted(params.uri)).dump() +
                                       " (see resources/templates/list)"));
  }
  c.session().Subscribe(params.uri);
  return Outcome::Of(EmptyResult());
}

Outcome Unsubscribe(Connection& c, RequestScope&, const UriParams& params) {
  c.session().Unsubscribe(params.uri);
  return Outcome::Of(EmptyResult());
}

Outcome Initialized(Connection&, RequestScope&, const NoParams&) {
  log::Debug(kLog, "client sent notifications/initialized");
  return Outcome::Later();
}

Outcome Cancelled(Connection& c, RequestScope&, const CancelledParams& params) {
  const JsonRpcConnection::Cancelled found = c.rpc().Cancel(params.request_id);
  if (found == JsonRpcConnection::Cancelled::kUnknown) return Outcome::Later();  // or answered
  log::Debug(kLog, "request " + params.request_id.dump() + " cancelled by the client");
  if (found == JsonRpcConnection::Cancelled::kStream) {
    c.EndSubscription(params.request_id, /*graceful=*/false);
  }
  return Outcome::Later();
}

// --- modern discovery and change notifications --------------------------------------------------

Outcome Discover(Connection& c, RequestScope&, const NoParams&) {
  const McpServer& server = c.server();
  return Outcome::Of(
      DiscoverResult(server.capabilities(), server.identity(), server.options().instructions));
}

Outcome Listen(Connection& c, RequestScope& scope, const ListenParams& params) {
  McpServer& server = c.server();
  if (!params.filter.task_ids.empty() && !DeclaresTasks(scope.client_capabilities)) {
    return Outcome::Fail(
        MissingClientCapability(Json{{"extensions", Json{{kTasksExtension, Json::object()}}}}));
  }
  switch (c.rpc().Begin(scope.id, nullptr, /*stream=*/true)) {
    case JsonRpcConnection::Admission::kAdmitted:
      break;
    case JsonRpcConnection::Admission::kClosed:
      return Outcome::Later();
    case JsonRpcConnection::Admission::kDuplicate:
      return Outcome::Fail(DuplicateRequestIdError(scope.id));
  }
  // The acknowledgement names what will be honoured (URIs no provider serves, or not to this
  // caller, are left out) and goes first; only then does the stream get notifications.
  ListenFilter accepted = params.filter;
  std::erase_if(accepted.resource_subscriptions, [&server, &scope](const std::string& uri) {
    return !server.ReachesResource(scope.caller, uri);
  });
  // Only the caller's own tasks (task_methods.cpp's rule: another owner's is unknown).
  std::erase_if(accepted.task_ids, [&server, &scope](const std::string& id) {
    return !server.tasks().Get(id, scope.caller.owner);
  });
  Json ack = ListenAcknowledgedParams(accepted);
  TagSubscription(ack, scope.id);
  c.EmitNotification(methods::kSubscriptionAcknowledged, std::move(ack), scope.id,
                     /*modern=*/true);
  // Listed only while its request is still open (the client may have ended it meanwhile).
  c.session().AddListen(scope.id, std::move(accepted),
                        [&c, &scope] { return c.rpc().IsInFlight(scope.id); });
  return Outcome::Later();
}

// --- tools ------------------------------------------------------------------------------------

Outcome ListTools(Connection& c, RequestScope& scope, const ListParams& params) {
  const McpServer& server = c.server();
  const bool task_execution = !scope.modern() && HasTasksUtility(scope.protocol_version);
  auto page = server.tools().List(params.cursor, server.options().page_size, task_execution);
  if (!page.ok()) return Outcome::Fail(InvalidParams(page.error().message));
  return Outcome::Of(ListResult("tools", std::move(page->tools), page->next_cursor));
}

Outcome CallTool(Connection& c, RequestScope& scope, const CallToolParams& params) {
  const ToolSpec* tool = c.server().tools().Find(params.name);
  if (tool == nullptr) return Outcome::Fail(InvalidParams("Unknown tool: " + params.name));
  if (scope.modern()) {
    Json missing = Json::object();
    for (const auto& [name, value] : tool->definition.required_client_capabilities.items()) {
      if (!scope.client_capabilities.contains(name)) missing[name] = value;
    }
    if (!missing.empty()) return Outcome::Fail(MissingClientCapability(missing));
  }
  Result<bool> as_task = CallAsTask(scope, *tool, params);
  if (!as_task.ok()) return Outcome::Fail(TaskCallRefusal(as_task.error()));
  std::shared_ptr<void> permit;
  if (CallLimiter* limiter = c.server().options().call_limiter; limiter != nullptr) {
    CallPermit admitted = limiter->Admit(scope.caller, tool->definition.name);
    if (admitted.refusal) {
      return Outcome::Fail(TooManyRequests(admitted.refusal->message, admitted.refusal->limit,
                                           admitted.refusal->retry_after_seconds));
    }
    permit = std::move(admitted.held);
  }
  InputResponses inputs = params.inputs;
  if (auto refused =
          OpenRequestState(c.server(), StateScope(methods::kToolsCall, params.name), &inputs)) {
    return Outcome::Fail(std::move(*refused));
  }
  // Arrival order is decided here, on the reading thread, before the call waits for a worker:
  // the arguments are parsed and the tool's admission reserves what it needs.
  auto call = std::make_shared<AdmittedCall>(tool->admit(params.arguments, scope.caller));
  if (permit) {
    // Held until the call is over: its run ends, and the admitted call (the task's too) is gone.
    call->run = [run = std::move(call->run), permit = std::move(permit)](ToolCallContext& ctx) {
      return run(ctx);
    };
  }
  if (auto id = params.arguments.find("session_id");
      id != params.arguments.end() && id->is_string()) {
    scope.session_id = log::Clip(id->get_ref<const std::string&>(), 128);
  }
  scope.tool = tool->definition.name;
  if (*as_task) return StartTask(c, scope, *tool, params, std::move(call), std::move(inputs));
  c.RunAsync(
      scope,
      [scope, tool, call, inputs = std::move(inputs)](Connection& self, std::stop_token token) {
        return RunTool(self, scope, *tool, *call, inputs, token);
      },
      tool->definition.quick);
  return Outcome::Later();
}

// --- resources ----------------------------------------------------------------------------------

Outcome ListResources(Connection& c, RequestScope& scope, const ListParams& params) {
  auto page = c.server().ListResources(scope.caller, params.cursor);
  if (!page.ok()) return Outcome::Fail(ToRpcError(page.error()));
  return Outcome::Of(ListResult("resources", std::move(page->resources), page->next_cursor));
}

Outcome ListResourceTemplates(Connection& c, RequestScope&, const ListParams&) {
  return Outcome::Of(ResourceTemplatesResult(c.server().ListResourceTemplates()));
}

Outcome ReadResource(Connection& c, RequestScope& scope, const UriParams& params) {
  auto contents = c.server().ReadResource(scope.caller, params.uri);
  if (contents.ok()) return Outcome::Of(std::move(contents).value());
  if (contents.error().code == ErrorCode::kNotFound) {
    return Outcome::Fail(ResourceNotFound(params.uri, scope.modern()));
  }
  return Outcome::Fail(ToRpcError(contents.error()));
}

// --- prompts and completion ---------------------------------------------------------------------

Outcome ListPrompts(Connection& c, RequestScope&, const ListParams& params) {
  const McpServer& server = c.server();
  auto page = server.prompts().List(params.cursor, server.options().page_size);
  if (!page.ok()) return Outcome::Fail(InvalidParams(page.error().message));
  return Outcome::Of(ListResult("prompts", std::move(page->prompts), page->next_cursor));
}

Outcome GetPrompt(Connection& c, RequestScope& scope, const GetPromptParams& params) {
  const McpServer& server = c.server();
  const std::string request = StateScope(methods::kPromptsGet, params.name);
  PromptCall call{params.arguments, params.inputs, scope.client_capabilities, scope.modern()};
  if (auto refused = OpenRequestState(server, request, &call.inputs)) {
    return Outcome::Fail(std::move(*refused));
  }
  auto answer = server.prompts().Get(params.name, call);
  if (!answer.ok()) return Outcome::Fail(ToRpcError(answer.error()));
  if (answer->input_required) {
    return AskForInput(server, scope, request, std::move(*answer->input_required));
  }
  return Outcome::Of(std::move(answer->result));
}

Outcome Complete(Connection& c, RequestScope&, const CompleteParams& params) {
  auto completion = c.server().completion_handler()(params.request);
  if (!completion.ok()) return Outcome::Fail(ToRpcError(completion.error()));
  return Outcome::Of(CompletionResult(std::move(completion).value()));
}

}  // namespace handlers
}  // namespace imgmcp::mcp
