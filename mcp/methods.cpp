// The core's one method table, and the methods it names: every request and notification the
// core knows, the eras it exists in, how it is answered, and its handler (typed params in, a
// result or an error out). Dispatch is in connection.cpp.
#include <algorithm>
#include <utility>

#include "common/log.h"
#include "mcp/connection.h"
#include "mcp/legacy_task_json.h"
#include "mcp/log_tag.h"
#include "mcp/server.h"

namespace imgmcp::mcp {

namespace {

// Lists that are the same for every caller and change only with a new build or configuration.
constexpr CachePolicy kStableList{300'000, /*public_scope=*/true};
// Sessions' resources: they change with every new version, and they are the caller's data.
constexpr CachePolicy kSessionData{0, /*public_scope=*/false};
}  // namespace

template <typename Params,
          Connection::Outcome (Connection::*Method)(Connection::RequestScope&, const Params&)>
Connection::Outcome Connection::Typed(RequestScope& scope, const Json& params) {
  Result<Params> parsed = Params::FromJson(params, scope.method->name);
  if (!parsed.ok()) return Outcome::Fail(InvalidParams(parsed.error().message));
  return (this->*Method)(scope, parsed.value());
}

const std::vector<Connection::MethodSpec>& Connection::Table() {
  using C = Connection;
  static const std::vector<MethodSpec> kTable = [] {
    std::vector<MethodSpec> table = {
        // Legacy lifecycle and session state.
        {{.name = methods::kInitialize, .legacy = true, .before_initialize = true},
         &C::Typed<InitializeParams, &C::Initialize>},
        {{.name = methods::kPing, .legacy = true, .before_initialize = true},
         &C::Typed<NoParams, &C::Ping>},
        {{.name = methods::kSetLevel, .legacy = true}, &C::Typed<SetLevelParams, &C::SetLogLevel>},
        {{.name = methods::kResourcesSubscribe, .legacy = true},
         &C::Typed<UriParams, &C::Subscribe>},
        {{.name = methods::kResourcesUnsubscribe, .legacy = true},
         &C::Typed<UriParams, &C::Unsubscribe>},
        // Modern discovery and change notifications.
        {{.name = methods::kDiscover, .modern = true, .cache = kStableList},
         &C::Typed<NoParams, &C::Discover>},
        // Answered later: the stream stays open until the client ends it.
        {{.name = methods::kListen, .modern = true, .streams = true, .long_lived = true},
         &C::Typed<ListenParams, &C::Listen>},
        // Both eras.
        {{.name = methods::kToolsList, .legacy = true, .modern = true, .cache = kStableList},
         &C::Typed<ListParams, &C::ListTools>},
        // Admitted on the calling thread (arrival order), run on a worker.
        {{.name = methods::kToolsCall,
          .legacy = true,
          .modern = true,
          .streams = true,
          .name_param = "name"},
         &C::Typed<CallToolParams, &C::CallTool>},
        {{.name = methods::kResourcesList,
          .legacy = true,
          .modern = true,
          .inline_answer = false,
          .cache = kSessionData},
         &C::Typed<ListParams, &C::ListResources>},
        {{.name = methods::kResourceTemplatesList,
          .legacy = true,
          .modern = true,
          .cache = kStableList},
         &C::Typed<ListParams, &C::ListResourceTemplates>},
        {{.name = methods::kResourcesRead,
          .legacy = true,
          .modern = true,
          .inline_answer = false,
          .cache = kSessionData,
          .name_param = "uri"},
         &C::Typed<UriParams, &C::ReadResource>},
        {{.name = methods::kPromptsList,
          .legacy = true,
          .modern = true,
          .cache = kStableList,
          .capability = &ServerCapabilities::prompts},
         &C::Typed<ListParams, &C::ListPrompts>},
        {{.name = methods::kPromptsGet,
          .legacy = true,
          .modern = true,
          .inline_answer = false,
          .name_param = "name",
          .capability = &ServerCapabilities::prompts},
         &C::Typed<GetPromptParams, &C::GetPrompt>},
        {{.name = methods::kComplete,
          .legacy = true,
          .modern = true,
          .inline_answer = false,
          .capability = &ServerCapabilities::completions},
         &C::Typed<CompleteParams, &C::Complete>},
        // Notifications.
        {{.name = methods::kCancelled, .legacy = true, .modern = true, .notification = true},
         &C::Typed<CancelledParams, &C::Cancelled>},
        {{.name = methods::kInitialized, .legacy = true, .notification = true},
         &C::Typed<NoParams, &C::Initialized>},
    };
    for (const MethodSpec& spec : TaskTable()) table.push_back(spec);
    return table;
  }();
  return kTable;
}

std::vector<Connection::MethodSpec> Connection::TaskTable() {
  using C = Connection;
  return {
      // Tasks: the extension (modern; its callers must declare it) and the 2025-11-25 utility
      // (legacy sessions that negotiated that version; tasks/result and tasks/list are its own).
      {{.name = methods::kTasksGet, .legacy = true, .modern = true, .name_param = "taskId"},
       &C::Typed<TaskIdParams, &C::GetTask>},
      {{.name = methods::kTasksUpdate, .modern = true, .name_param = "taskId"},
       &C::Typed<TaskUpdateParams, &C::UpdateTask>},
      {{.name = methods::kTasksCancel, .legacy = true, .modern = true, .name_param = "taskId"},
       &C::Typed<TaskIdParams, &C::CancelTask>},
      // Waits on a worker for the task to end: an HTTP POST streams meanwhile. No Mcp-Name: a
      // modern request for it is refused as unknown before any header is checked.
      {{.name = methods::kTasksResult, .legacy = true, .streams = true},
       &C::Typed<TaskIdParams, &C::TaskResult>},
      {{.name = methods::kTasksList, .legacy = true}, &C::Typed<ListParams, &C::ListTasks>},
  };
}

const Connection::MethodSpec* Connection::FindSpec(std::string_view name) {
  const auto& table = Table();
  auto it = std::find_if(table.begin(), table.end(),
                         [name](const MethodSpec& spec) { return spec.info.name == name; });
  return it == table.end() ? nullptr : &*it;
}

const MethodInfo* FindMethod(std::string_view name) {
  const Connection::MethodSpec* spec = Connection::FindSpec(name);
  return spec == nullptr ? nullptr : &spec->info;
}

bool Connection::Available(const MethodSpec& spec) const {
  return spec.info.capability == nullptr || server_.capabilities().*spec.info.capability;
}

// --- legacy lifecycle and session state ---------------------------------------------------------

Connection::Outcome Connection::Initialize(RequestScope&, const InitializeParams& params) {
  const std::string version = NegotiateProtocolVersion(params.protocol_version);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (initialized_) return Outcome::Fail(InvalidRequest("server already initialized"));
    initialized_ = true;
    protocol_version_ = version;
    client_capabilities_ = params.capabilities;
  }
  auto info_field = [&params](const char* key) {
    const Json& info = params.client_info;
    if (!info.is_object() || !info.contains(key)) return std::string("?");
    const Json& v = info[key];
    return v.is_string() ? v.get<std::string>() : v.dump();
  };
  log::Info(kLog, "initialize from " + info_field("name") + " " + info_field("version") +
                      ": requested \"" + params.protocol_version + "\", speaking " + version);
  Json result = InitializeResult(version, server_.capabilities(), server_.identity(),
                                 server_.options().instructions);
  if (HasTasksUtility(version) && server_.tools().AnyTaskSupport()) {
    result["capabilities"]["tasks"] = TasksUtilityCapability();
  }
  return Outcome::Of(std::move(result));
}

Connection::Outcome Connection::Ping(RequestScope&, const NoParams&) {
  return Outcome::Of(EmptyResult());
}

Connection::Outcome Connection::SetLogLevel(RequestScope&, const SetLevelParams& params) {
  log_level_.store(static_cast<int>(params.level));
  return Outcome::Of(EmptyResult());
}

Connection::Outcome Connection::Subscribe(RequestScope&, const UriParams& params) {
  // A URI no provider could ever serve is refused, not silently watched forever.
  if (!server_.HandlesResource(params.uri)) {
    return Outcome::Fail(InvalidParams("Unknown resource URI: " + Json(Quoted(params.uri)).dump() +
                                       " (see resources/templates/list)"));
  }
  std::lock_guard<std::mutex> lock(mu_);
  subscriptions_.insert(params.uri);
  return Outcome::Of(EmptyResult());
}

Connection::Outcome Connection::Unsubscribe(RequestScope&, const UriParams& params) {
  std::lock_guard<std::mutex> lock(mu_);
  subscriptions_.erase(params.uri);
  return Outcome::Of(EmptyResult());
}

Connection::Outcome Connection::Initialized(RequestScope&, const NoParams&) {
  log::Debug(kLog, "client sent notifications/initialized");
  return Outcome::Later();
}

Connection::Outcome Connection::Cancelled(RequestScope&, const CancelledParams& params) {
  HandleCancelled(params.request_id);
  return Outcome::Later();
}

// --- modern discovery and change notifications --------------------------------------------------

Connection::Outcome Connection::Discover(RequestScope&, const NoParams&) {
  return Outcome::Of(
      DiscoverResult(server_.capabilities(), server_.identity(), server_.options().instructions));
}

Connection::Outcome Connection::Listen(RequestScope& scope, const ListenParams& params) {
  const std::string key = IdKey(scope.id);
  if (!params.filter.task_ids.empty() && !DeclaresTasks(scope.client_capabilities)) {
    return Outcome::Fail(
        MissingClientCapability(Json{{"extensions", Json{{kTasksExtension, Json::object()}}}}));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return Outcome::Later();
    if (in_flight_.count(key) > 0) {
      return Outcome::Fail(DuplicateRequestIdError(scope.id));
    }
    in_flight_.emplace(key, InFlight{scope.id, std::stop_source(), nullptr, true, std::nullopt});
  }
  // The acknowledgement names what will be honoured (URIs no provider serves are left out) and
  // goes first; only then does the stream get notifications.
  ListenFilter accepted = params.filter;
  std::erase_if(accepted.resource_subscriptions,
                [this](const std::string& uri) { return !server_.HandlesResource(uri); });
  // Only the caller's own tasks (task_methods.cpp's rule: another owner's is unknown).
  std::erase_if(accepted.task_ids, [this, &scope](const std::string& id) {
    return !server_.tasks().Get(id, scope.owner);
  });
  Json ack = ListenAcknowledgedParams(accepted);
  TagSubscription(ack, scope.id);
  EmitNotification(methods::kSubscriptionAcknowledged, std::move(ack), scope.id, /*modern=*/true);
  std::lock_guard<std::mutex> lock(mu_);
  if (in_flight_.count(key) > 0) listens_.emplace(key, Subscription{scope.id, std::move(accepted)});
  return Outcome::Later();
}

// --- tools ------------------------------------------------------------------------------------

Connection::Outcome Connection::ListTools(RequestScope& scope, const ListParams& params) {
  const bool task_execution = !scope.modern() && HasTasksUtility(scope.protocol_version);
  auto page = server_.tools().List(params.cursor, server_.options().page_size, task_execution);
  if (!page.ok()) return Outcome::Fail(InvalidParams(page.error().message));
  return Outcome::Of(ListResult("tools", std::move(page->tools), page->next_cursor));
}

Connection::Outcome Connection::CallTool(RequestScope& scope, const CallToolParams& params) {
  const ToolSpec* tool = server_.tools().Find(params.name);
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
  InputResponses inputs = params.inputs;
  if (auto refused = OpenRequestState(StateScope(methods::kToolsCall, params.name), &inputs)) {
    return Outcome::Fail(std::move(*refused));
  }
  // Arrival order is decided here, on the reading thread, before the call waits for a worker:
  // the arguments are parsed and the tool's admission reserves what it needs.
  auto call = std::make_shared<AdmittedCall>(tool->admit(params.arguments));
  if (auto id = params.arguments.find("session_id");
      id != params.arguments.end() && id->is_string()) {
    scope.session_id = log::Clip(id->get_ref<const std::string&>(), 128);
  }
  scope.tool = tool->definition.name;
  if (*as_task) return StartTask(scope, *tool, params, std::move(call), std::move(inputs));
  RunAsync(
      scope,
      [scope, tool, call, inputs = std::move(inputs)](Connection& self, std::stop_token token) {
        return self.RunTool(scope, *tool, *call, inputs, token);
      },
      tool->definition.quick);
  return Outcome::Later();
}

// --- resources ----------------------------------------------------------------------------------

Connection::Outcome Connection::ListResources(RequestScope&, const ListParams& params) {
  auto page = server_.ListResources(params.cursor);
  if (!page.ok()) return Outcome::Fail(ToRpcError(page.error()));
  return Outcome::Of(ListResult("resources", std::move(page->resources), page->next_cursor));
}

Connection::Outcome Connection::ListResourceTemplates(RequestScope&, const ListParams&) {
  return Outcome::Of(ResourceTemplatesResult(server_.ListResourceTemplates()));
}

Connection::Outcome Connection::ReadResource(RequestScope& scope, const UriParams& params) {
  auto contents = server_.ReadResource(params.uri);
  if (contents.ok()) return Outcome::Of(std::move(contents).value());
  if (contents.error().code == ErrorCode::kNotFound) {
    return Outcome::Fail(ResourceNotFound(params.uri, scope.modern()));
  }
  return Outcome::Fail(ToRpcError(contents.error()));
}

// --- prompts and completion ---------------------------------------------------------------------

Connection::Outcome Connection::ListPrompts(RequestScope&, const ListParams& params) {
  auto page = server_.prompts().List(params.cursor, server_.options().page_size);
  if (!page.ok()) return Outcome::Fail(InvalidParams(page.error().message));
  return Outcome::Of(ListResult("prompts", std::move(page->prompts), page->next_cursor));
}

Connection::Outcome Connection::GetPrompt(RequestScope& scope, const GetPromptParams& params) {
  const std::string request = StateScope(methods::kPromptsGet, params.name);
  PromptCall call{params.arguments, params.inputs, scope.client_capabilities, scope.modern()};
  if (auto refused = OpenRequestState(request, &call.inputs)) {
    return Outcome::Fail(std::move(*refused));
  }
  auto answer = server_.prompts().Get(params.name, call);
  if (!answer.ok()) return Outcome::Fail(ToRpcError(answer.error()));
  if (answer->input_required) {
    return AskForInput(scope, request, std::move(*answer->input_required));
  }
  return Outcome::Of(std::move(answer->result));
}

// --- multi round-trip requests ------------------------------------------------------------------

std::optional<RpcError> Connection::OpenRequestState(const std::string& request,
                                                     InputResponses* inputs) const {
  if (!inputs->request_state) return std::nullopt;
  auto plain = server_.request_state_seal().Open(request, *inputs->request_state);
  if (!plain.ok()) return InvalidParams(plain.error().message);
  inputs->request_state = std::move(plain).value();
  return std::nullopt;
}

Connection::Outcome Connection::AskForInput(const RequestScope& scope, const std::string& request,
                                            InputRequest input) const {
  if (!scope.modern()) {
    return Outcome::Fail(InternalError(request + " needs input from the client, which protocol " +
                                       scope.protocol_version + " cannot ask for"));
  }
  Json missing = Json::object();
  if (!input.requests.is_object()) input.requests = Json::object();
  for (const auto& [key, asked] : input.requests.items()) {
    const std::string capability =
        ClientCapabilityFor(asked.is_object() ? asked.value("method", "") : "");
    if (capability.empty()) {
      log::Error(kLog, request + " asked the client for an unknown kind of input: " + asked.dump());
      return Outcome::Fail(InternalError(request + " asked for input a client cannot give"));
    }
    if (!scope.client_capabilities.contains(capability)) missing[capability] = Json::object();
  }
  if (!missing.empty()) return Outcome::Fail(MissingClientCapability(missing));
  std::optional<std::string> state;
  if (input.state) state = server_.request_state_seal().Seal(request, *input.state);
  return Outcome::Of(InputRequiredResult(std::move(input.requests), state));
}

Connection::Outcome Connection::Complete(RequestScope&, const CompleteParams& params) {
  auto completion = server_.completion_handler()(params.request);
  if (!completion.ok()) return Outcome::Fail(ToRpcError(completion.error()));
  return Outcome::Of(CompletionResult(std::move(completion).value()));
}

}  // namespace imgmcp::mcp
