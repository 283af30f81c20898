// The tasks extension's methods on a connection (task_runner.h): a tools/call answered with a
// task, and tasks/get, tasks/update and tasks/cancel, for modern callers that declared the
// extension in the request's client capabilities. tasks/get and tasks/cancel of a legacy session
// are the 2025-11-25 utility's (legacy_task_methods.cpp).
#include <algorithm>
#include <utility>
#include <vector>

#include "common/trace_context.h"
#include "mcp/connection.h"
#include "mcp/legacy_task_json.h"
#include "mcp/method_handlers.h"
#include "mcp/server.h"

namespace imgmcp::mcp {

namespace {
RpcError TasksNotDeclared() {
  return MissingClientCapability(Json{{"extensions", Json{{kTasksExtension, Json::object()}}}});
}

RpcError UnknownTask(const std::string& task_id) {
  return InvalidParams("Unknown task: " + Json(Quoted(task_id)).dump() +
                       " (it never existed, has expired, or belongs to other credentials)");
}
}  // namespace

namespace handlers {

Result<bool> CallAsTask(const RequestScope& scope, const ToolSpec& tool,
                        const CallToolParams& params) {
  const ToolDefinition& def = tool.definition;
  if (!scope.modern()) {
    ASSIGN_OR_RETURN(std::optional<TaskAugmentation> augmented,
                     ReadAugmentation(scope.protocol_version, def, params.task));
    return augmented.has_value();
  }
  if (def.task_support == TaskSupport::kForbidden) return false;
  if (!DeclaresTasks(scope.client_capabilities)) {
    if (def.task_support == TaskSupport::kRequired) {
      return MakeError(ErrorCode::kFailedPrecondition, "tool needs the tasks extension");
    }
    return false;
  }
  return !def.as_task || def.as_task(params.arguments, params.inputs);
}

Outcome StartTask(Connection& c, const RequestScope& scope, const ToolSpec& tool,
                  const CallToolParams& params, std::shared_ptr<AdmittedCall> call,
                  InputResponses inputs) {
  TaskCall task;
  task.tool = tool.definition.name;
  task.arguments = params.arguments;
  task.modern = scope.modern();
  if (!scope.modern() && params.task) {
    auto augmentation = TaskAugmentation::FromJson(*params.task);  // CallAsTask read it already
    if (augmentation.ok()) task.ttl_ms = augmentation->ttl_ms;
  }
  task.call = std::move(call);
  task.protocol_version = scope.protocol_version;
  task.client_capabilities = scope.client_capabilities;
  task.traceparent = scope.traceparent;
  task.caller = scope.caller;
  task.inputs = std::move(inputs);
  auto started = c.server().tasks().Start(std::move(task));
  if (!started.ok()) return Outcome::Fail(ToRpcError(started.error()));
  if (!scope.modern()) return AnswerLegacyTask(c, scope, *started);
  return Outcome::Of(CreateTaskResultJson(*started));
}

Outcome GetTask(Connection& c, RequestScope& scope, const TaskIdParams& params) {
  if (!scope.modern()) return LegacyGetTask(c, scope, params);
  if (!DeclaresTasks(scope.client_capabilities)) return Outcome::Fail(TasksNotDeclared());
  auto task = c.server().tasks().Get(params.task_id, scope.caller.owner);
  if (!task) return Outcome::Fail(UnknownTask(params.task_id));
  return Outcome::Of(DetailedTaskJson(*task));
}

Outcome UpdateTask(Connection& c, RequestScope& scope, const TaskUpdateParams& params) {
  if (!DeclaresTasks(scope.client_capabilities)) return Outcome::Fail(TasksNotDeclared());
  Status updated =
      c.server().tasks().Update(params.task_id, scope.caller.owner, params.input_responses);
  if (!updated.ok()) return Outcome::Fail(UnknownTask(params.task_id));
  return Outcome::Of(EmptyResult());
}

Outcome CancelTask(Connection& c, RequestScope& scope, const TaskIdParams& params) {
  if (!scope.modern()) return LegacyCancelTask(c, scope, params);
  if (!DeclaresTasks(scope.client_capabilities)) return Outcome::Fail(TasksNotDeclared());
  // The extension's cancel is acknowledged whatever came of it (a task whose commit came first
  // still completes, which its status then shows).
  auto cancelled = c.server().tasks().Cancel(params.task_id, scope.caller.owner);
  AuditCancel(c, scope, params.task_id, cancelled);
  if (!cancelled.ok()) return Outcome::Fail(UnknownTask(params.task_id));
  return Outcome::Of(EmptyResult());
}

void AuditCancel(Connection& c, const RequestScope& scope, const std::string& task_id,
                 const Result<CancelOutcome>& cancelled) {
  AuditTrail* audit = c.server().options().audit;
  if (audit == nullptr) return;
  AuditEntry entry;
  entry.caller = scope.caller;
  entry.action = methods::kTasksCancel;
  entry.task_id = task_id;
  if (auto trace = ParseTraceParent(scope.traceparent)) entry.trace_id = trace->trace_id;
  if (!cancelled.ok()) {
    entry.outcome = "not found";
  } else if (cancelled->kind == CancelOutcome::Kind::kCancelled) {
    entry.outcome = "ok";
  } else if (cancelled->kind == CancelOutcome::Kind::kTooLate) {
    entry.outcome = "too late: " + cancelled->message;
  } else {
    entry.outcome = "ended already";
  }
  audit->Record(entry);
}

}  // namespace handlers

bool Connection::ListensForTask(const std::string& task_id) const {
  return session_.ListensForTask(task_id);
}

void Connection::NotifyTask(const TaskSnapshot& task) {
  handlers::NotifyLegacyTask(*this, task);
  const std::vector<Json> streams = session_.ListensWanting([&task](const ListenFilter& filter) {
    const auto& ids = filter.task_ids;
    return std::find(ids.begin(), ids.end(), task.task_id) != ids.end();
  });
  for (const Json& id : streams) {
    Json params = DetailedTaskJson(task);
    TagSubscription(params, id);
    EmitNotification(methods::kTasksNotification, std::move(params), id, /*modern=*/true);
  }
}

}  // namespace imgmcp::mcp
