#include "mcp/protocol.h"

#include <cmath>
#include <utility>

#include "common/json_reader.h"
#include "common/trace_context.h"
#include "mcp/log_level.h"
#include "mcp/method_table.h"

namespace imgmcp::mcp {

namespace {

constexpr char kMeta[] = "_meta";
constexpr char kProtocolVersionKey[] = "io.modelcontextprotocol/protocolVersion";
constexpr char kClientCapabilitiesKey[] = "io.modelcontextprotocol/clientCapabilities";
constexpr char kClientInfoKey[] = "io.modelcontextprotocol/clientInfo";
constexpr char kLogLevelKey[] = "io.modelcontextprotocol/logLevel";
constexpr char kServerInfoKey[] = "io.modelcontextprotocol/serverInfo";
constexpr char kSubscriptionIdKey[] = "io.modelcontextprotocol/subscriptionId";

const Json* MetaOf(const Json& params) {
  if (!params.is_object()) return nullptr;
  auto it = params.find(kMeta);
  return it != params.end() && it->is_object() ? &*it : nullptr;
}

// Reads the members of one params object through JsonObjectReader (common/json_reader.h), which
// decides what a member is (absent and null are alike; a params that is no object has none), in
// the protocol's own wording, which names the method and the member ("tools/call needs
// params.name (string)"). The first problem is kept.
class ParamReader {
 public:
  // `where`: the object's path in the request, as errors name it ("params.notifications").
  ParamReader(const Json& params, std::string_view method, std::string where = "params")
      : fields_(params), method_(method), where_(std::move(where)) {}

  void RequiredString(const char* key, std::string* out) {
    const Json* v = Value(key);
    if (v == nullptr || !v->is_string()) {
      return Fail(method_ + " needs " + Name(key) + " (string)");
    }
    *out = v->get<std::string>();
  }
  void OptionalString(const char* key, std::optional<std::string>* out) {
    const Json* v = Value(key);
    if (v == nullptr) return;
    if (!v->is_string()) return Fail(method_ + " " + Name(key) + " must be a string");
    *out = v->get<std::string>();
  }
  void OptionalBool(const char* key, bool* out) {
    const Json* v = Value(key);
    if (v == nullptr) return;
    if (!v->is_boolean()) return Fail(method_ + " " + Name(key) + " must be true or false");
    *out = v->get<bool>();
  }
  void OptionalObject(const char* key, Json* out) {
    const Json* v = Value(key);
    if (v == nullptr) return;
    if (!v->is_object()) return Fail(method_ + " " + Name(key) + " must be an object");
    *out = *v;
  }
  void OptionalObject(const char* key, std::optional<Json>* out) {
    Json value;
    OptionalObject(key, &value);
    if (!value.is_null()) *out = std::move(value);
  }
  void RetryInputsOf(InputResponses* out) {
    OptionalObject("inputResponses", &out->responses);
    OptionalString("requestState", &out->request_state);
  }
  // The member as sent, or nullptr when absent or null (or after a problem).
  const Json* Value(const char* key) { return error_ ? nullptr : fields_.OptionalValue(key); }

  Status Finish() const {
    if (error_) return *error_;
    return Status::Ok();
  }

 private:
  std::string Name(const char* key) const { return where_ + "." + key; }
  void Fail(std::string message) {
    if (!error_) error_ = InvalidArgument(std::move(message));
  }

  JsonObjectReader fields_;
  const std::string method_;
  const std::string where_;
  std::optional<Error> error_;
};

template <typename T>
Result<T> Finished(const ParamReader& reader, T value) {
  RETURN_IF_ERROR(reader.Finish());
  return value;
}

std::string LogLevelChoices() {
  return "use debug, info, notice, warning, error, critical, alert or emergency";
}

// A number as JSON: integral values as integers ("50", not "50.0").
Json NumberJson(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.0e15) {
    return static_cast<int64_t>(v);
  }
  return v;
}

Json ServerInfoJson(const ServerIdentity& server) {
  Json info = Json::object();
  info["name"] = server.name;
  if (!server.title.empty()) info["title"] = server.title;
  info["version"] = server.version;
  return info;
}

}  // namespace

// --- envelope -----------------------------------------------------------------------------------

bool HasEnvelopeClaim(const Json& params) {
  const Json* meta = MetaOf(params);
  return meta != nullptr && meta->contains(kProtocolVersionKey);
}

std::optional<std::string> ClaimedVersion(const Json& params) {
  const Json* meta = MetaOf(params);
  if (meta == nullptr) return std::nullopt;
  auto it = meta->find(kProtocolVersionKey);
  if (it == meta->end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<RpcError> ReadModernEnvelope(const Json& params, ModernEnvelope* out) {
  auto invalid = [](std::string detail) {
    RpcError error =
        InvalidParams("Invalid _meta for protocol revision 2026-07-28: " + std::move(detail));
    error.before_dispatch = true;
    return error;
  };
  const Json* meta = MetaOf(params);
  if (meta == nullptr) {
    return invalid("params._meta is required, with \"" + std::string(kProtocolVersionKey) +
                   "\" and \"" + kClientCapabilitiesKey + "\"");
  }
  auto version = meta->find(kProtocolVersionKey);
  if (version == meta->end() || !version->is_string()) {
    return invalid(std::string(kProtocolVersionKey) + " is required (a string)");
  }
  auto caps = meta->find(kClientCapabilitiesKey);
  if (caps == meta->end() || !caps->is_object()) {
    return invalid(std::string(kClientCapabilitiesKey) + " is required (an object)");
  }
  auto info = meta->find(kClientInfoKey);
  if (info != meta->end() && !info->is_object()) {
    return invalid(std::string(kClientInfoKey) + " must be an object");
  }
  std::optional<LogLevel> level;
  if (auto l = meta->find(kLogLevelKey); l != meta->end()) {
    if (l->is_string()) level = ParseLogLevel(l->get<std::string>());
    if (!level) {
      return invalid("Invalid log level " + l->dump() + " in " + kLogLevelKey + "; " +
                     LogLevelChoices());
    }
  }
  const std::string requested = version->get<std::string>();
  if (!IsSupportedModernVersion(requested)) return UnsupportedProtocolVersion(requested);
  out->protocol_version = requested;
  out->client_capabilities = *caps;
  if (info != meta->end()) out->client_info = *info;
  out->log_level = level;
  return std::nullopt;
}

std::string ReadTraceParent(const Json& params) {
  const Json* meta = MetaOf(params);
  if (meta == nullptr) return {};
  auto found = meta->find("traceparent");
  if (found == meta->end() || !found->is_string()) return {};
  const std::string& text = found->get_ref<const std::string&>();
  return ParseTraceParent(text) ? text : std::string();
}

std::optional<Json> ReadProgressToken(const Json& params) {
  const Json* meta = MetaOf(params);
  if (meta == nullptr) return std::nullopt;
  auto token = meta->find("progressToken");
  if (token == meta->end() || !IsValidId(*token)) return std::nullopt;
  return *token;
}

// --- params -------------------------------------------------------------------------------------

Result<NoParams> NoParams::FromJson(const Json&, std::string_view) { return NoParams{}; }

Result<InitializeParams> InitializeParams::FromJson(const Json& params, std::string_view method) {
  ParamReader r(params, method);
  InitializeParams p;
  r.RequiredString("protocolVersion", &p.protocol_version);
  // Lenient, as before: a capabilities or clientInfo of the wrong type is ignored.
  if (const Json* caps = r.Value("capabilities"); caps != nullptr && caps->is_object()) {
    p.capabilities = *caps;
  }
  if (const Json* info = r.Value("clientInfo"); info != nullptr) p.client_info = *info;
  return Finished(r, std::move(p));
}

Result<SetLevelParams> SetLevelParams::FromJson(const Json& params, std::string_view) {
  auto level = params.find("level");
  std::optional<LogLevel> parsed;
  if (level != params.end() && level->is_string())
    parsed = ParseLogLevel(level->get<std::string>());
  if (!parsed) {
    return InvalidArgument("Invalid log level" +
                           (level == params.end() ? std::string() : ": " + level->dump()) + "; " +
                           LogLevelChoices());
  }
  return SetLevelParams{*parsed};
}

Result<ListParams> ListParams::FromJson(const Json& params, std::string_view method) {
  ParamReader r(params, method);
  ListParams p;
  r.OptionalString("cursor", &p.cursor);
  return Finished(r, std::move(p));
}

Result<UriParams> UriParams::FromJson(const Json& params, std::string_view method) {
  ParamReader r(params, method);
  UriParams p;
  r.RequiredString("uri", &p.uri);
  return Finished(r, std::move(p));
}

Result<InvokeParams> InvokeParams::FromJson(const Json& params, std::string_view method) {
  ParamReader r(params, method);
  InvokeParams p;
  r.RequiredString("name", &p.name);
  r.OptionalObject("arguments", &p.arguments);
  r.RetryInputsOf(&p.inputs);
  if (const Json* task = r.Value("task"); task != nullptr) p.task = *task;
  return Finished(r, std::move(p));
}

Result<CompleteParams> CompleteParams::FromJson(const Json& params, std::string_view) {
  return CompleteParams{params};
}

Result<ListenParams> ListenParams::FromJson(const Json& params, std::string_view method) {
  ParamReader r(params, method);
  Json filter = Json::object();
  r.OptionalObject("notifications", &filter);
  RETURN_IF_ERROR(r.Finish());
  ListenParams p;
  ParamReader notifications(filter, method, "params.notifications");
  notifications.OptionalBool("toolsListChanged", &p.filter.tools_list_changed);
  notifications.OptionalBool("promptsListChanged", &p.filter.prompts_list_changed);
  notifications.OptionalBool("resourcesListChanged", &p.filter.resources_list_changed);
  RETURN_IF_ERROR(notifications.Finish());
  if (const Json* uris = notifications.Value("resourceSubscriptions"); uris != nullptr) {
    if (!uris->is_array()) {
      return InvalidArgument(
          std::string(method) +
          " params.notifications.resourceSubscriptions must be an array of URIs");
    }
    for (const Json& uri : *uris) {
      if (!uri.is_string()) {
        return InvalidArgument(
            std::string(method) +
            " params.notifications.resourceSubscriptions must be an array of URIs");
      }
      p.filter.resource_subscriptions.push_back(uri.get<std::string>());
    }
  }
  if (const Json* ids = notifications.Value("taskIds"); ids != nullptr) {
    const std::string bad =
        std::string(method) + " params.notifications.taskIds must be an " + "array of task ids";
    if (!ids->is_array()) return InvalidArgument(bad);
    for (const Json& id : *ids) {
      if (!id.is_string()) return InvalidArgument(bad);
      p.filter.task_ids.push_back(id.get<std::string>());
    }
  }
  return p;
}

Result<CancelledParams> CancelledParams::FromJson(const Json& params, std::string_view method) {
  auto id = params.find("requestId");
  if (id == params.end() || !IsValidId(*id)) {
    return InvalidArgument(std::string(method) + " needs params.requestId (string or integer)");
  }
  ParamReader r(params, method);
  CancelledParams p;
  p.request_id = *id;
  r.OptionalString("reason", &p.reason);
  return Finished(r, std::move(p));
}

// --- results ------------------------------------------------------------------------------------

Json CapabilitiesJson(const ServerCapabilities& c) {
  Json caps = Json::object();
  caps["tools"] = Json{{"listChanged", c.tools_list_changed}};
  caps["resources"] =
      Json{{"subscribe", c.resources_subscribe}, {"listChanged", c.resources_list_changed}};
  caps["logging"] = Json::object();
  if (c.prompts) caps["prompts"] = Json{{"listChanged", c.prompts_list_changed}};
  if (c.completions) caps["completions"] = Json::object();
  return caps;
}

Json InitializeResult(const std::string& version, const ServerCapabilities& capabilities,
                      const ServerIdentity& server, const std::string& instructions) {
  Json result = Json::object();
  result["protocolVersion"] = version;
  result["capabilities"] = CapabilitiesJson(capabilities);
  result["serverInfo"] = ServerInfoJson(server);
  if (!instructions.empty()) result["instructions"] = instructions;
  return result;
}

Json DiscoverResult(const ServerCapabilities& capabilities, const ServerIdentity& server,
                    const std::string& instructions) {
  Json versions = Json::array();
  for (std::string_view v : kAllProtocolVersions) versions.push_back(v);
  Json result = Json::object();
  result["supportedVersions"] = std::move(versions);
  result["capabilities"] = CapabilitiesJson(capabilities);
  // Extensions exist only on the modern wire: the tasks extension (mcp/task_runner.h).
  result["capabilities"]["extensions"] = Json{{"io.modelcontextprotocol/tasks", Json::object()}};
  if (!instructions.empty()) result["instructions"] = instructions;
  return result;
}

Json EmptyResult() { return Json::object(); }

Json ListResult(const char* key, Json items, const std::optional<std::string>& next_cursor) {
  Json result = Json::object();
  result[key] = std::move(items);
  if (next_cursor) result["nextCursor"] = *next_cursor;
  return result;
}

Json ResourceTemplatesResult(Json templates) {
  Json result = Json::object();
  result["resourceTemplates"] = std::move(templates);
  return result;
}

Json CompletionResult(Json completion) {
  Json result = Json::object();
  result["completion"] = std::move(completion);
  return result;
}

void DecorateModernResult(Json& result, const std::optional<CachePolicy>& cache,
                          const ServerIdentity& server) {
  if (!result.is_object()) return;
  const bool complete = !result.contains("resultType");
  if (complete) result["resultType"] = "complete";
  if (complete && cache) {
    result["ttlMs"] = cache->ttl_ms;
    result["cacheScope"] = cache->public_scope ? "public" : "private";
  }
  Json& meta = result[kMeta];
  if (!meta.is_object()) meta = Json::object();
  meta[kServerInfoKey] = ServerInfoJson(server);
}

std::string StateScope(std::string_view method, std::string_view name) {
  std::string scope(method);
  scope.push_back(' ');
  scope.append(name);
  return scope;
}

std::string ClientCapabilityFor(std::string_view method) {
  const std::string_view capability = method.substr(0, method.find('/'));
  for (std::string_view known : {"sampling", "elicitation", "roots"}) {
    if (capability == known) return std::string(known);
  }
  return "";
}

Json InputRequiredResult(Json input_requests, const std::optional<std::string>& request_state) {
  Json result = Json::object();
  result["resultType"] = "input_required";
  if (input_requests.is_object() && !input_requests.empty()) {
    result["inputRequests"] = std::move(input_requests);
  }
  if (request_state) result["requestState"] = *request_state;
  return result;
}

Json ListenEndResult(const Json& subscription_id) {
  Json result = Json::object();
  TagSubscription(result, subscription_id);
  return result;
}

// --- notifications ------------------------------------------------------------------------------

Json ProgressParams(const Json& token, double progress, std::optional<double> total,
                    const std::string& message) {
  Json params = Json::object();
  params["progressToken"] = token;
  params["progress"] = NumberJson(progress);
  if (total) params["total"] = NumberJson(*total);
  if (!message.empty()) params["message"] = message;
  return params;
}

Json LogMessageParams(LogLevel level, const std::string& logger, const Json& data) {
  Json params = Json::object();
  params["level"] = LogLevelName(level);
  if (!logger.empty()) params["logger"] = logger;
  params["data"] = data;
  return params;
}

Json ResourceUpdatedParams(const std::string& uri) {
  Json params = Json::object();
  params["uri"] = uri;
  return params;
}

Json CancelledNotificationParams(const Json& request_id, const std::string& reason) {
  Json params = Json::object();
  params["requestId"] = request_id;
  params["reason"] = reason;
  return params;
}

Json ListenAcknowledgedParams(const ListenFilter& accepted) {
  Json filter = Json::object();
  if (accepted.tools_list_changed) filter["toolsListChanged"] = true;
  if (accepted.prompts_list_changed) filter["promptsListChanged"] = true;
  if (accepted.resources_list_changed) filter["resourcesListChanged"] = true;
  if (!accepted.resource_subscriptions.empty()) {
    filter["resourceSubscriptions"] = accepted.resource_subscriptions;
  }
  if (!accepted.task_ids.empty()) filter["taskIds"] = accepted.task_ids;
  Json params = Json::object();
  params["notifications"] = std::move(filter);
  return params;
}

void TagSubscription(Json& params, const Json& subscription_id) {
  Json& meta = params[kMeta];
  if (!meta.is_object()) meta = Json::object();
  meta[kSubscriptionIdKey] = subscription_id;
}

// --- routing facts ------------------------------------------------------------------------------

RequestFacts ReadRequestFacts(const Json& message) {
  RequestFacts facts;
  const Json* params = nullptr;
  IncomingMessage shape = PeekIncoming(message, &params);
  facts.kind = shape.kind;
  facts.id = std::move(shape.id);
  facts.method = std::move(shape.method);
  if (facts.kind != IncomingMessage::Kind::kRequest &&
      facts.kind != IncomingMessage::Kind::kNotification) {
    return facts;
  }
  facts.info = FindMethod(facts.method);
  if (params == nullptr) return facts;
  facts.envelope_claim = HasEnvelopeClaim(*params);
  facts.claimed_version = ClaimedVersion(*params);
  if (facts.info != nullptr && facts.info->name_param != nullptr) {
    auto it = params->find(facts.info->name_param);
    if (it != params->end() && it->is_string()) facts.name = it->get<std::string>();
  }
  return facts;
}

}  // namespace imgmcp::mcp
